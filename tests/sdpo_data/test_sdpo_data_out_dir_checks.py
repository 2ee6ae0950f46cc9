"""Every sdpo_data command tries its --out-dir for writing before it reads, downloads or converts anything: one error
line naming the flag, exit 2, and the file in the way is left as it was (issue 50)."""
from __future__ import annotations

import importlib

import pytest

COMMANDS = {  # module -> its arguments besides --out-dir
    "sdpo_data.prepare": ["lean", "--dataset", "minif2f", "--input", "absent.jsonl", "--prompt-style", "kimina"],
    "sdpo_data.smollm2": [],
    "sdpo_data.addition_rows": [],
    "sdpo_data.toy_lean": [],
}


@pytest.mark.parametrize("module", sorted(COMMANDS))
def test_an_out_dir_that_cannot_be_made_is_one_error_line(module, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("kept")
    out_dir = blocker / "data"
    main = importlib.import_module(module).main
    assert main([*COMMANDS[module], "--out-dir", str(out_dir)]) == 2
    assert capsys.readouterr().err == (f"error: --out-dir {out_dir}: {blocker} is a file, so no folder can be made "
                                       "there (choose another path)\n")
    assert blocker.read_text() == "kept"
