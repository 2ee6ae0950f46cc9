"""Every command-line tool refuses the same way (issue 58 item 4): one `error:` line, the last on stderr (argparse's
usage text and notes may come before it), never a traceback, never "error: error:", exit 2 for bad input and 3 for a
missing backend."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MISSING = "/nonexistent/sdpo-lean-test/missing"
NO_FOLDER = "/dev/null/out"       # /dev/null is a file: no folder can be made under it
MATH_ROW = '{"problem": "1+1?", "solution": "\\\\boxed{2}", "level": "Level 1", "type": "Algebra"}\n'

# (module, arguments, exit code); {tmp} is a fresh folder, {math} a one-problem MATH JSONL in it
BAD_INPUT = [
    ("sdpo_eval.math_eval", ["--model", "m", "--input", f"{MISSING}.jsonl"], 2),
    ("sdpo_eval.math_eval", ["--model", "m", "--input", "{math}", "--k", "x"], 2),
    ("sdpo_eval.prover_eval", ["passk", "--model", "m", "--data", f"{MISSING}.parquet", "--n", "1"], 2),
    ("sdpo_eval.prover_eval", ["passk", "--model", "m", "--data", "{math}", "--n", "1", "--k", "2"], 2),
    ("sdpo_eval.discovery", ["report", "--log", f"{MISSING}.jsonl", "--budget", "4", "--no-recheck"], 2),
    ("sdpo_eval.discovery", ["run", "--task", "demo", "--methods", "nope", "--seeds", "1", "--budget", "4",
                             "--problems", "a", "--out-dir", "{tmp}/d"], 2),
    ("sdpo_eval.discovery", ["sample", "--recipe", "sdpo_demo", "--problems", "a", "--budget", "0", "--runs",
                             "best_of_k:1", "--out-dir", "{tmp}/s"], 2),
    ("sdpo_eval.curves", [f"{MISSING}.jsonl", "--out", "{tmp}/c.png"], 2),
    ("sdpo_eval.recheck", ["--log", f"{MISSING}.jsonl", "--recheck-project", "{tmp}"], 2),
    ("reward.lean.cli", ["verify", f"{MISSING}.jsonl"], 2),
    ("sdpo_data.prepare", ["lean", "--dataset", "minif2f", "--input", f"{MISSING}.jsonl", "--prompt-style", "kimina",
                           "--out-dir", "{tmp}/p"], 2),
    ("sdpo_data.smollm2", ["--out-dir", NO_FOLDER], 2),
    ("sdpo_data.addition_rows", ["--out-dir", NO_FOLDER], 2),
    ("sdpo_data.toy_lean", ["--out-dir", NO_FOLDER], 2),
    ("sdpo_ext.startup.check", ["recipe=sdpo_demo", "not an override"], 2),
    ("sdpo_ext.startup.check", ["recipe=sdpo_demo", "a=["], 2),
    ("sdpo_ext.startup.check", ["+recipe=sdpo_toy_lean", "trainer.n_gpus_per_node=0"], 2),   # a refused run
    ("verl.trainer.main_ppo", ["+recipe=sdpo_toy_lean", "trainer.n_gpus_per_node=0"], 2),    # the run itself
    ("reward.cli", ["verify", "x.jsonl"], 2),
]
NO_VLLM = importlib.util.find_spec("vllm") is None
MISSING_BACKEND = [
    ("sdpo_eval.math_eval", ["--model", "m", "--input", "{math}", "--engine", "vllm"], 3),
    ("sdpo_eval.math_eval", ["--model", "m", "--input", "{math}", "--backend", "vllm"], 3),   # the old spelling
]


def run_cli(module: str, args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    math = tmp_path / "math.jsonl"
    math.write_text(MATH_ROW)
    argv = [a.format(tmp=tmp_path, math=math) for a in args]
    return subprocess.run([sys.executable, "-m", module, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"})


def assert_one_error_line(done: subprocess.CompletedProcess, code: int, what: str) -> None:
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert "Traceback" not in done.stderr, f"{what}: a traceback\n{done.stderr[-2000:]}"
    assert "error: error:" not in done.stderr, f"{what}: doubled\n{done.stderr}"
    assert len(errors) == 1, f"{what}: {len(errors)} error lines\n{done.stderr}"
    assert done.stderr.strip().splitlines()[-1] == errors[0], f"{what}: the error goes on past its line\n{done.stderr}"
    assert done.returncode == code, f"{what}: exit {done.returncode}, not {code}\n{done.stderr}"


@pytest.mark.parametrize("module, args, code", BAD_INPUT, ids=[f"{m}:{a[0]}" for m, a, _ in BAD_INPUT])
def test_bad_input_is_one_error_line_and_exit_2(module, args, code, tmp_path):
    assert_one_error_line(run_cli(module, args, tmp_path), code, f"python -m {module} {' '.join(args)}")


@pytest.mark.skipif(not NO_VLLM, reason="vLLM is installed here: its absence cannot be shown")
@pytest.mark.parametrize("module, args, code", MISSING_BACKEND, ids=[a[-2] for _, a, _ in MISSING_BACKEND])
def test_a_missing_backend_is_one_error_line_and_exit_3(module, args, code, tmp_path):
    assert_one_error_line(run_cli(module, args, tmp_path), code, f"python -m {module} {' '.join(args)}")


def test_every_entry_point_is_covered():
    """A new CLI (tests/layout/test_cli_help.py lists them) gets a bad-input case here too."""
    from tests.layout.test_cli_help import ENTRY_POINTS

    covered = {m for m, _, _ in BAD_INPUT} | {"sdpo_eval.discovery.cli", "sdpo_eval.discovery.sampler"}
    assert set(ENTRY_POINTS) <= covered, sorted(set(ENTRY_POINTS) - covered)
