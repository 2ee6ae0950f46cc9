"""`reward.lean.cli verify` on inputs a newcomer really has: bad rows after good ones, on both Lean doubles."""
import concurrent.futures
import json
import subprocess
import sys
import threading

import pytest

from lean_env.backends import factory
from lean_env.backends.kimina import KiminaBackend
from lean_env.options import BackendOptions
from lean_env.testing.fake_kimina import FakeKimina
from reward.lean.cli import double_in_use, main

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
BAD_ROWS = [  # (row text, words the verdict's error must contain)
    (json.dumps({"name": "t2", "formal_statement": 42, "output": "x"}), "formal_statement"),
    (json.dumps({"name": "t3", "output": "x"}), "formal_statement"),
    (json.dumps({"formal_statement": STATEMENT}), "output"),
    (json.dumps({"ground_truth": "{not json", "output": "x"}), "JSON"),
    ("[1, 2]", "object"),
    ('{"name": "t4", "formal_st', "truncated"),   # a cut last line
]


def _write_input(path, answer) -> list[dict]:
    good = [{"name": "t1", "formal_statement": STATEMENT, "output": answer(p)} for p in ("norm_num", "sorry")]
    path.write_text("".join(json.dumps(r) + "\n" for r in good) + "\n".join(text for text, _ in BAD_ROWS))
    return good


def _check_outputs(out_path) -> None:
    got = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [g["line"] for g in got] == list(range(1, 3 + len(BAD_ROWS)))
    assert [g["verdict"] for g in got[:2]] == ["valid", "sorry"]
    for g, (_, words) in zip(got[2:], BAD_ROWS):
        assert g["verdict"] == "bad_row" and g["infra"] == 1.0 and g["score"] == 0.0
        assert words in g["error"], g
    assert got[6]["raw"] == [1, 2] and got[7]["raw"] == BAD_ROWS[-1][0]   # nothing the user wrote is lost


def test_repl_double_bad_rows_after_good_rows_never_hang(tmp_path, answer):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_input(inp, answer)
    proc = subprocess.run([sys.executable, "-m", "reward.lean.cli", "verify", str(inp), "--out", str(out), "--backend",
                           "repl", "--repl-command", f"{sys.executable} -m lean_env.testing.fake_repl"],
                          check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    _check_outputs(out)
    assert "TEST DOUBLE, NOT LEAN" in proc.stderr and "bad_row" in proc.stdout and "total" in proc.stdout
    assert f"{inp}:7: bad row: a row must be a JSON object" in proc.stderr


def _run_in_thread(argv: list[str]) -> int:
    """main(argv) with a deadline: a hang fails the test instead of stalling the suite (a daemon thread, since leaving
    a ThreadPoolExecutor block would wait for the hung call; one full-suite run hung here on tqdm's write lock)."""
    result: concurrent.futures.Future = concurrent.futures.Future()

    def run() -> None:
        try:
            result.set_result(main(argv))
        except BaseException as exc:  # re-raised in the test thread
            result.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return result.result(timeout=60)


@pytest.fixture
def kimina_double(monkeypatch):
    def use(fake: FakeKimina) -> None:
        monkeypatch.setattr(factory, "make_backend",
                            lambda cfg: KiminaBackend(cfg.url, transport=fake.transport(), backoff_s=0.01))
    return use


def test_kimina_double_bad_rows_after_good_rows(tmp_path, answer, kimina_double, capsys):
    kimina_double(FakeKimina())
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_input(inp, answer)
    assert _run_in_thread(["verify", str(inp), "--out", str(out), "--backend", "kimina"]) == 2
    _check_outputs(out)
    assert "TEST DOUBLE, NOT LEAN" in capsys.readouterr().err


def test_infra_rows_exit_3_and_are_masked(tmp_path, answer, kimina_double):
    kimina_double(FakeKimina(faults=[500] * 100))
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text(json.dumps({"formal_statement": STATEMENT, "output": answer("norm_num")}) + "\n")
    rc = _run_in_thread(["verify", str(inp), "--out", str(out), "--backend", "kimina", "--backoff-s", "0.01"])
    assert rc == 3
    (got,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert got["verdict"] == "infra" and got["infra"] == 1.0


def test_empty_input_is_bad_input(tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text("\n")
    assert main(["verify", str(inp), "--backend", "repl", "--repl-command", "lake exe repl"]) == 2


def test_real_backends_get_no_banner():
    assert double_in_use(BackendOptions(backend="repl", repl_command="lake exe repl"), object()) is None
    assert double_in_use(BackendOptions(backend="kimina"), KiminaBackend("http://lean:8000")) is None
    fake_backend = KiminaBackend("http://x", transport=FakeKimina().transport())
    assert double_in_use(BackendOptions(backend="kimina"), fake_backend)


def test_a_missing_input_or_an_unknown_backend_is_one_error_line(tmp_path, capsys):
    """Exit 2 (bad input), no traceback: a file that is not there; a backend argparse does not offer."""
    assert main(["verify", str(tmp_path / "absent.jsonl"), "--backend", "repl"]) == 2
    assert capsys.readouterr().err.startswith(f"error: {tmp_path / 'absent.jsonl'}: no such file")
    with pytest.raises(SystemExit) as stop:
        main(["verify", str(tmp_path / "absent.jsonl"), "--backend", "foo"])
    assert stop.value.code == 2 and "invalid choice: 'foo' (choose from 'kimina', 'repl', 'repl-ray')" in \
        capsys.readouterr().err


def _latin1_input(path, answer) -> None:
    """Line 1 UTF-8; line 2 a valid proof whose comment holds a Latin-1 byte (0xe9), which UTF-8 cannot read."""
    rows = [json.dumps({"formal_statement": STATEMENT, "output": answer(p)}, ensure_ascii=False).encode()
            for p in ("norm_num", "norm_num -- caf\u00e9")]
    path.write_bytes(rows[0] + b"\n" + rows[1].replace("\u00e9".encode(), b"\xe9") + b"\n")


def test_a_row_that_is_not_utf8_is_a_bad_row_naming_the_line(tmp_path, answer, kimina_double, capsys):
    """Replaced silently, such a row could be judged valid (issue 50); it is refused unless the user asks."""
    kimina_double(FakeKimina())
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _latin1_input(inp, answer)
    assert _run_in_thread(["verify", str(inp), "--out", str(out), "--backend", "kimina"]) == 2
    assert f"{inp}:2: bad row: not UTF-8 text (byte 0xe9 at byte " in capsys.readouterr().err
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["verdict"] for g in got] == ["valid", "bad_row"] and "--replace-bad-bytes" in got[1]["error"]
    assert _run_in_thread(["verify", str(inp), "--out", str(out), "--backend", "kimina", "--replace-bad-bytes"]) == 0
    assert [json.loads(line)["verdict"] for line in out.read_text().splitlines()] == ["valid", "valid"]


def test_an_output_it_cannot_write_is_one_error_line_before_any_row_is_checked(tmp_path, answer, capsys):
    inp, blocker = tmp_path / "in.jsonl", tmp_path / "a_file"
    inp.write_text(json.dumps({"formal_statement": STATEMENT, "output": answer("norm_num")}) + "\n")
    blocker.write_text("kept")
    assert main(["verify", str(inp), "--out", str(blocker / "out.jsonl"), "--backend", "repl"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --out {blocker / 'out.jsonl'}: {blocker} is a file, so no folder can be made there " \
                  "(choose another path)\n"
    assert blocker.read_text() == "kept"
