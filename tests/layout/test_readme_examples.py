"""The README's runnable CPU examples print what the README shows: each ```bash block that is followed (after at
most one line of prose) by a plain ``` block is run in bash, with `/tmp/` moved into the test's folder, and every
line of the shown output must appear in what it prints to the terminal (stdout and stderr, unbuffered), in order."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def examples(text: str) -> list[tuple[int, str, list[str]]]:
    """(line number, bash script, shown output lines) of each bash block with an output block after it."""
    lines = text.splitlines()
    found, i = [], 0
    while i < len(lines):
        if lines[i].strip() != "```bash":
            i += 1
            continue
        end = lines.index("```", i + 1)
        script = "\n".join(lines[i + 1:end])
        j = end + 1
        if j < len(lines) and lines[j].strip() != "```":
            j += 1  # one line of prose, e.g. "prints (progress bar left out)"
        if j < len(lines) and lines[j].strip() == "```":
            out_end = lines.index("```", j + 1)
            found.append((i + 1, script, lines[j + 1:out_end]))
            i = out_end + 1
        else:
            i = end + 1
    return found


EXAMPLES = examples(README.read_text(encoding="utf-8"))


def test_the_readme_has_runnable_examples():
    assert len(EXAMPLES) >= 2, [line for line, _, _ in EXAMPLES]


def _in_order(shown: list[str], printed: list[str]) -> list[str]:
    """The shown lines (whitespace runs collapsed) missing from `printed` when read in order."""
    norm = [re.sub(r"\s+", " ", line).strip() for line in printed]
    missing, at = [], 0
    for line in (re.sub(r"\s+", " ", s).strip() for s in shown):
        if not line:
            continue
        hit = next((k for k in range(at, len(norm)) if norm[k] == line), None)
        if hit is None:
            missing.append(line)
        else:
            at = hit + 1
    return missing


@pytest.mark.parametrize("line, script, shown", EXAMPLES, ids=[f"README.md:{line}" for line, _, _ in EXAMPLES])
def test_a_readme_example_prints_what_the_readme_shows(line, script, shown, tmp_path):
    here = f"{tmp_path}/"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python"  # the README says `python`; run it with this interpreter (a symlink loses the venv)
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "PYTHONUNBUFFERED": "1"}
    done = subprocess.run(["bash", "-c", script.replace("/tmp/", here)], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    missing = _in_order([s.replace("/tmp/", here) for s in shown], done.stdout.splitlines())
    assert not missing, f"README.md:{line}: not printed as shown: {missing}\nprinted:\n{done.stdout[-6000:]}"
