"""Offline re-check (`lean_env.recheck`, `sdpo_eval.recheck`) against fake lake/lean/comparator/lean4checker
executables that print and exit as the real tools do (lean_env.testing.fake_lean_tools); no Lean needed."""
import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import pytest

import lean_env.recheck.comparator
import lean_env.recheck.lean4checker
import lean_env.recheck.safeverify
from lean_env.options import RecheckOptions
from lean_env.recheck import (
    RecheckJob,
    ToolRun,
    ToolSetup,
    classify_comparator,
    classify_lean4checker,
    classify_safeverify,
    comparator_sources,
    recheck,
    recheck_one,
)
from lean_env.screen import screen
from lean_env.verify import Task
from sdpo_eval import recheck as cli
from sdpo_options.flags import from_flags

HEADER = "import Mathlib\n\nopen Real\n"
STATEMENT = "theorem t1 (x : ℕ) (h : x = 2) : x + 1 = 3 := by\n  sorry"
DEF_STATEMENT = "def d1 (n : ℕ) : Fin (n + 1) :="


def output(proof_line: str = "subst h\n  rfl",
           statement: str = "theorem t1 (x : ℕ) (h : x = 2) : x + 1 = 3 := by") -> str:
    return f"<think>ok</think>\n```lean4\n{statement}\n  {proof_line}\n```"


def config(recheck_tools, tool, timeout_s=30.0, **options):
    paths, project = recheck_tools
    command = paths["safe_verify" if tool == "safeverify" else tool]
    options = {"recheck_command": str(command), "recheck_lake": str(paths["lake"]), **options}
    return ToolSetup.from_options(RecheckOptions(recheck_tool=tool, recheck_project=str(project),
                                                 recheck_timeout_s=timeout_s, **options), keep_files=True)


def job(key, proof_line="subst h\n  rfl", header=HEADER, statement=STATEMENT, answer=None):
    return RecheckJob(key, Task(name="t1" if "t1" in statement else "d1", formal_statement=statement, header=header),
                      answer or output(proof_line))


# --------------------------------------------------------------------------------------------- comparator

def test_comparator_confirms_and_writes_challenge_solution_and_config(recheck_tools):
    (result,) = recheck([job("P1")], config(recheck_tools, "comparator"), progress=False)
    assert (result.status, result.message) == ("confirmed", "Your solution is okay!")
    folder = recheck_tools[1] / "SdpoRecheck" / "P1"
    challenge, solution = (folder / "Challenge.lean").read_text(), (folder / "Solution.lean").read_text()
    assert challenge.startswith("import Mathlib\nopen Real\n") and challenge.rstrip().endswith("sorry")
    assert "theorem t1 (x : ℕ) (h : x = 2) : x + 1 = 3 :=" in solution and "sorry" not in solution
    assert "subst h" in solution and "subst h" not in challenge
    cfg = json.loads((folder / "config.json").read_text())
    assert cfg["challenge_module"] == "SdpoRecheck.P1.Challenge" and cfg["solution_module"] == "SdpoRecheck.P1.Solution"
    assert cfg["theorem_names"] == ["t1"] and cfg["definition_names"] == []
    assert set(cfg["permitted_axioms"]) == {"propext", "Classical.choice", "Quot.sound"}


def test_comparator_def_statement_is_a_definition_hole(recheck_tools):
    answer = "```lean4\ndef d1 (n : ℕ) : Fin (n + 1) := 0\n```"
    (result,) = recheck([job("P2", statement=DEF_STATEMENT, answer=answer)], config(recheck_tools, "comparator"),
                        progress=False)
    cfg = json.loads((recheck_tools[1] / "SdpoRecheck" / "P2" / "config.json").read_text())
    assert result.status == "confirmed" and cfg["theorem_names"] == [] and cfg["definition_names"] == ["d1"]


@pytest.mark.parametrize("marker, status, needle", [
    ("mismatch", "rejected", "theorem statement do not match: 't1'"),
    ("axiom", "rejected", "Illegal axiom detected: 'sorryAx'"),
    ("tamper", "rejected", "(kernel) declaration type mismatch"),
    ("error", "rejected", "does not compile"),
    ("export-crash", "infra", "exporting the solution failed"),
    ("crash", "infra", "without a reason"),
    ("build-crash", "infra", "no Lean error"),   # issue 57: a checker that crashes is infra, never a verdict
])
def test_comparator_failures_are_classified_with_the_tools_message(recheck_tools, marker, status, needle):
    (result,) = recheck([job("P3", f"rfl -- fake:{marker}")], config(recheck_tools, "comparator"), progress=False)
    assert result.status == status and needle in result.message


def test_comparator_broken_challenge_is_infra_not_a_verdict(recheck_tools):
    (result,) = recheck([job("P4", header=HEADER + "-- fake:challenge-broken\n")], config(recheck_tools, "comparator"),
                        progress=False)
    assert result.status == "infra" and "trusted challenge failed (build SdpoRecheck.P4.Challenge)" in result.message


def test_comparator_timeout_is_infra_and_kills_the_process_group(recheck_tools):
    start = time.monotonic()
    (result,) = recheck([job("P5", "rfl -- fake:hang")], config(recheck_tools, "comparator", timeout_s=1.5),
                        progress=False)
    assert result.status == "infra" and "timed out after 1.5 s" in result.message
    assert time.monotonic() - start < 15   # the sleeping grandchild did not keep the pipes open


def test_missing_tool_is_infra(recheck_tools):
    project = recheck_tools[1]
    cfg = config(recheck_tools, "comparator", recheck_command=str(project / "no-such-comparator"))
    (result,) = recheck([job("P6")], cfg, progress=False)
    assert result.status == "infra" and "no such file" in result.message
    cfg = config(recheck_tools, "comparator", recheck_command="comparator", recheck_lake=str(project / "no-such-lake"))
    (result,) = recheck([job("P6")], cfg, progress=False)
    assert result.status == "infra" and "cannot run" in result.message


def test_a_stored_proof_that_todays_screen_rejects_is_rejected_without_running_the_tool(recheck_tools):
    (result,) = recheck([job("P7", "native_decide")], config(recheck_tools, "comparator"), progress=False)
    assert result.status == "rejected" and "today's screen rejects it (forbidden)" in result.message
    assert not (recheck_tools[1] / "SdpoRecheck" / "P7").exists()


def test_comparator_sources_keep_the_statements_open_in_on_the_theorem():
    statement = "open Real in\ntheorem t3 : Real.pi > 3 := by\n"
    out = "```lean4\nlemma aux : (1 : ℕ) = 1 := rfl\n\ntheorem t3 : Real.pi > 3 := by\n  exact Real.pi_gt_three\n```"
    challenge, solution = comparator_sources(screen(statement, out), "import Mathlib\n")
    assert challenge == "import Mathlib\n\n\nopen Real in\ntheorem t3 : Real.pi > 3 :=\n  sorry\n"
    assert "rfl\n\nopen Real in\ntheorem t3 : Real.pi > 3 := by\n  exact Real.pi_gt_three\n" in solution


def test_classify_comparator_on_real_output_shapes():
    ok = ToolRun(0, "Building A.Challenge\nExporting #[comm] from A.Challenge\nBuilding A.Solution\n"
                    "Exporting #[comm] from A.Solution\nRunning Lean default kernel on solution.\n"
                    "Lean default kernel accepts the solution\nYour solution is okay!\n", "")
    assert classify_comparator(ok, "A.Challenge", 10)[0] == "confirmed"
    silent = ToolRun(0, "Building A.Challenge\n", "")
    assert classify_comparator(silent, "A.Challenge", 10)[0] == "infra"
    missing = ToolRun(1, "Building A.Challenge\nExporting #[comm] from A.Challenge\nBuilding A.Solution\n"
                         "Exporting #[comm] from A.Solution\n",
                    "uncaught exception: Const not found in challenge 'comm'")
    assert classify_comparator(missing, "A.Challenge", 10)[0] == "infra"
    config_error = ToolRun(1, "", "uncaught exception: Expected config file path as first argument.")
    assert classify_comparator(config_error, "A.Challenge", 10)[0] == "infra"


# ------------------------------------------------------------------------------------------- lean4checker

def test_lean4checker_confirms_after_the_offline_compile_is_judged_valid(recheck_tools):
    (result,) = recheck([job("Q1")], config(recheck_tools, "lean4checker"), progress=False)
    assert result.status == "confirmed", result.message
    source = recheck_tools[1] / ".sdpo_recheck" / "SdpoRecheck" / "Q1.lean"
    text = source.read_text()
    assert "#print axioms _root_.sdpo_check_" in text and "in theorem _root_.sdpo_check_" in text
    assert "axiom sdpo_ref_" in text
    assert source.with_suffix(".olean").exists()


@pytest.mark.parametrize("marker, header, status, needle", [
    ("tamper", HEADER, "rejected", "(kernel) declaration type mismatch, 'false' has type"),
    ("error", HEADER, "rejected", "the solution does not compile: lean_error"),
    ("no-olean", HEADER, "infra", "wrote no .olean without reporting an error"),
    ("", "import NoSuchLib\n", "infra", "unknown module prefix 'NoSuchLib'"),
])
def test_lean4checker_failures_are_classified(recheck_tools, marker, header, status, needle):
    (result,) = recheck([job("Q2", f"rfl -- fake:{marker}", header=header)], config(recheck_tools, "lean4checker"),
                        progress=False)
    assert result.status == status and needle in result.message, result.message


@pytest.mark.parametrize("tool", ["comparator", "lean4checker", "safeverify"])
def test_on_a_ported_toolchain_a_proof_that_does_not_compile_is_unverified_and_a_forgery_still_a_cheat(
        recheck_tools, tool):
    ported = config(recheck_tools, tool, recheck_ported=True)
    (failed,) = recheck([job("P1", "rfl -- fake:error")], ported, progress=False)
    assert failed.status == "infra" and "on the ported toolchain" in failed.message, failed.message
    (same,) = recheck([job("P2", "rfl -- fake:error")], config(recheck_tools, tool), progress=False)
    assert same.status == "rejected"  # on the proofs' own toolchain it stays a verdict
    (forged,) = recheck([job("P3", "rfl -- fake:tamper")], ported, progress=False)
    assert forged.status == "rejected", forged.message


def test_parallel_runs_keep_input_order(recheck_tools):
    jobs = [job("W1"), job("W2", "rfl -- fake:tamper"), job("W3"), job("W4", "rfl -- fake:error")]
    results = recheck(jobs, config(recheck_tools, "lean4checker"), workers=3, progress=False)
    assert [(r.key, r.status) for r in results] == [("W1", "confirmed"), ("W2", "rejected"), ("W3", "confirmed"),
                                                     ("W4", "rejected")]


def test_classify_lean4checker_on_real_output_shapes():
    stdout = "Searching for modules matching: [M.X]\nFound 1 modules to check\n"
    assert classify_lean4checker(ToolRun(0, stdout, ""), "M.X", 10)[0] == "confirmed"
    kernel = ToolRun(1, stdout,
                     "lean4checker found a problem in M.X\nuncaught exception: No such constructor False.intro")
    assert classify_lean4checker(kernel, "M.X", 10) == ("rejected", "No such constructor False.intro")
    lost = ToolRun(1, "Searching for modules matching: [M.X]\n",
                   "uncaught exception: Could not find any oleans for: M.X")
    assert classify_lean4checker(lost, "M.X", 10)[0] == "infra"
    assert classify_lean4checker(ToolRun(None, "", "", timed_out=True), "M.X", 10)[0] == "infra"


# --------------------------------------------------------------------------------------------- SafeVerify

def test_safeverify_confirms_after_compiling_target_and_submission(recheck_tools):
    (result,) = recheck([job("S1")], config(recheck_tools, "safeverify"), progress=False)
    assert (result.status, result.message) == ("confirmed", "SafeVerify check passed.")
    folder = recheck_tools[1] / ".sdpo_recheck" / "SdpoRecheck" / "S1"
    assert "sorry" in (folder / "Target.lean").read_text() and "subst h" in (folder / "Submission.lean").read_text()
    assert (folder / "Target.olean").exists() and (folder / "Submission.olean").exists()


@pytest.mark.parametrize("marker, header, status, needle", [
    ("tamper", HEADER, "rejected", "(kernel) declaration type mismatch"),
    ("axiom", HEADER, "rejected", "t1 used disallowed axioms. [sorryAx]"),
    ("mismatch", HEADER, "rejected", "with declaration t1: thmType; SafeVerify check failed"),
    ("error", HEADER, "rejected", "the solution does not compile: line"),
    ("", "import NoSuchLib\n", "infra", "the trusted challenge fails in this project"),
])
def test_safeverify_failures_are_classified(recheck_tools, marker, header, status, needle):
    (result,) = recheck([job("S2", f"rfl -- fake:{marker}", header=header)], config(recheck_tools, "safeverify"),
                        progress=False)
    assert result.status == status and needle in result.message, result.message


def test_classify_safeverify_target_failures_are_infra():
    target = Path("/w/Target.olean")
    replay_target = ToolRun(1, "", "Replaying /w/Target.olean\nuncaught exception: (kernel) unknown constant 'x'")
    assert classify_safeverify(replay_target, target, 10)[0] == "infra"
    missing = ToolRun(1, "", "Replaying /w/Target.olean\n"
                             "uncaught exception: object file '/w/Target.olean' does not exist")
    assert classify_safeverify(missing, target, 10)[0] == "infra"
    replay_submission = ToolRun(1, "", "Replaying /w/Target.olean\nReplaying /w/Sub.olean\n"
                                       "uncaught exception: (kernel) unknown constant 'x'")
    assert classify_safeverify(replay_submission, target, 10) == ("rejected", "(kernel) unknown constant 'x'")
    assert classify_safeverify(ToolRun(0, "", "Replaying /w/Target.olean\n"), target, 10)[0] == "infra"


# ------------------------------------------------------------------------------------- a job's own files

REJECTS = {"comparator": "fake:mismatch", "lean4checker": "fake:tamper", "safeverify": "fake:mismatch"}
CRASHING = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
SLEEPING = [sys.executable, "-c", "import time; time.sleep(60)"]
RUNNER_MODULES = {"comparator": lean_env.recheck.comparator, "lean4checker": lean_env.recheck.lean4checker,
                  "safeverify": lean_env.recheck.safeverify}


def project_files(project: Path) -> list[Path]:
    return sorted(p for p in project.rglob("*") if p.is_file() and p.name != "lakefile.toml")


@pytest.mark.parametrize("failure, status", [("rejected", "rejected"), ("crash", "infra"), ("timeout", "infra"),
                                             ("raises", "infra")])
@pytest.mark.parametrize("tool", ["comparator", "lean4checker", "safeverify"])
def test_without_keep_files_a_failed_run_leaves_none_of_its_files(recheck_tools, monkeypatch, tool, failure, status):
    cfg = dataclasses.replace(config(recheck_tools, tool, timeout_s=1.0), keep_files=False)
    if failure in ("crash", "timeout"):
        cfg = dataclasses.replace(cfg, tool_command=CRASHING if failure == "crash" else SLEEPING)
    module, seen = RUNNER_MODULES[tool], []

    def tool_run(*args, **kwargs):   # the tool's own run: every file of the job is written by now
        seen.extend(project_files(recheck_tools[1]))
        if failure == "raises":
            raise OSError("disk full")
        return real_run(*args, **kwargs)

    real_run = module.run_tool
    monkeypatch.setattr(module, "run_tool", tool_run)
    proof = f"rfl -- {REJECTS[tool]}" if failure == "rejected" else "subst h\n  rfl"
    result = recheck_one(job("J1", proof), cfg)
    assert result.status == status, result.message
    assert seen and all("J1" in str(p) for p in seen)
    assert project_files(recheck_tools[1]) == []


@pytest.mark.parametrize("tool, marker, status, needle", [
    ("lean4checker", "error", "rejected", "the solution does not compile: lean_error"),
    ("lean4checker", "no-olean", "infra", "wrote no .olean"),
    ("safeverify", "error", "rejected", "the solution does not compile"),
])
def test_without_keep_files_a_run_that_stops_at_the_compile_leaves_none_of_its_files(recheck_tools, tool, marker,
                                                                                      status, needle):
    cfg = dataclasses.replace(config(recheck_tools, tool), keep_files=False)
    result = recheck_one(job("J2", f"rfl -- fake:{marker}"), cfg)
    assert result.status == status and needle in result.message, result.message
    assert project_files(recheck_tools[1]) == []


# -------------------------------------------------------------------------------------------------- CLI

def _write_log(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_cli_rechecks_only_rewarded_rows_and_gives_every_bad_row_a_verdict(recheck_tools, tmp_path, capsys):
    paths, project = recheck_tools
    gt = {"formal_statement": STATEMENT, "name": "t1", "header": HEADER}
    log = _write_log(tmp_path / "verdicts.jsonl", [
        {**gt, "output": output(), "verdict": "valid", "score": 1.0, "infra": 0.0},              # confirmed
        {**gt, "output": output("rfl -- fake:tamper"), "verdict": "valid", "score": 1.0, "infra": 0.0},  # rejected
        {**gt, "output": output("omega"), "verdict": "lean_error", "score": 0.0, "infra": 0.0},  # not rewarded
        {"ground_truth": json.dumps(gt), "output": output(), "score": 1.0},                      # no verdict, score 1
        {"problem": "unknown", "proof": output(), "verdict": "valid", "score": 1.0, "infra": 0},  # problem not known
        {**gt, "verdict": "valid", "score": 1.0, "infra": 0},                                    # no proof stored
        "{not json",                                                                              # unreadable
        {**gt, "output": output(), "verdict": "infra", "score": 0.0, "infra": 1.0},              # masked: skipped
    ])
    out = tmp_path / "res.jsonl"
    code = cli.main(["--log", str(log), "--recheck-project", str(project), "--recheck-tool", "comparator",
                     "--recheck-command", str(paths["comparator"]), "--recheck-lake", str(paths["lake"]),
                     "--out", str(out)])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 1
    assert [r["status"] for r in rows] == ["confirmed", "rejected", "confirmed", "infra", "infra", "infra"]
    assert [r["source"].rsplit(":", 1)[1] for r in rows] == ["1", "2", "4", "5", "6", "7"]
    assert "not in --data" in rows[3]["message"] and "stores no proof" in rows[4]["message"]
    printed = capsys.readouterr().out
    assert "confirmed" in printed and "2 rows not rewarded" in printed


def test_cli_attempt_log_with_parquet_problems_exits_zero_when_all_confirmed(recheck_tools, tmp_path):
    pd = pytest.importorskip("pandas")
    paths, project = recheck_tools
    gt = json.dumps({"formal_statement": STATEMENT, "name": "t1", "header": HEADER})
    data = tmp_path / "problems.parquet"
    pd.DataFrame([{"data_source": "lean", "prompt": [{"role": "user", "content": "prove"}],
                   "reward_model": {"ground_truth": gt, "style": "rule"},
                   "extra_info": {"name": "t1"}}]).to_parquet(data)
    _write_log(tmp_path / "run" / "sdpo" / "t1" / "attempts.jsonl", [
        {"problem": "t1", "method": "sdpo", "run_id": "r", "step": 1, "attempt": 1, "seed": 0, "response_tokens": 9,
         "verdict": "valid", "score": 1.0, "infra": 0, "proof": output()}])
    code = cli.main(["--run-dir", str(tmp_path / "run"), "--data", str(data), "--recheck-project", str(project),
                     "--recheck-tool", "lean4checker", "--recheck-command", str(paths["lean4checker"]),
                     "--recheck-lake", str(paths["lake"])])
    assert code == 0
    out = tmp_path / "run" / "sdpo" / "t1" / "attempts.recheck.jsonl"
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["status"] == "confirmed" and row["problem"] == "t1"


def test_cli_usage_errors_name_the_fix(recheck_tools, tmp_path, capsys):
    project = recheck_tools[1]
    log = _write_log(tmp_path / "a.jsonl", [])
    lean4checker = ["--recheck-tool", "lean4checker"]
    assert cli.main(["--log", str(log), "--recheck-project", str(tmp_path / "nowhere"), *lean4checker]) == 2
    assert "no lakefile" in capsys.readouterr().err
    assert cli.main(["--run-dir", str(tmp_path / "empty"), "--recheck-project", str(project), *lean4checker]) == 2
    assert "no input" in capsys.readouterr().err
    assert cli.main(["--log", str(log), *lean4checker]) == 2
    assert capsys.readouterr().err.startswith("error: pass --recheck-project DIR (")
    assert cli.main(["--log", str(log), "--recheck-project", str(project), "--recheck-lib", "bad-name"]) == 2
    assert "recheck_lib must be a Lean module name component" in capsys.readouterr().err
    assert cli.main(["--log", str(log), "--recheck-project", str(project), "--recheck-tool", "comparator",
                     "--recheck-workers", "2"]) == 2
    assert "recheck_workers must be at least 1, and 1 for comparator" in capsys.readouterr().err
    (project / "lakefile.toml").write_text('name = "ws"\n')
    assert cli.main(["--log", str(log), "--recheck-project", str(project), "--recheck-tool", "comparator"]) == 2
    assert 'globs = ["SdpoRecheck.+"]' in capsys.readouterr().err
    missing = tmp_path / "missing.jsonl"
    assert cli.main(["--log", str(missing), "--data", str(tmp_path / "x.parquet"), "--recheck-project", str(project),
                     "--recheck-tool", "lean4checker"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: no such file: {missing}, {tmp_path / 'x.parquet'}") and "Traceback" not in err


def test_cli_flags_are_the_recheck_options_of_the_reports():
    """One home for the re-check settings: the offline CLI's flags are the report CLIs' `--recheck-*` flags, and
    unset they give RecheckOptions' defaults (one timeout default for the strict mode, the reports and this CLI)."""
    from sdpo_eval.report_recheck import add_report_flags

    ours, report = cli._parser(), argparse.ArgumentParser()
    add_report_flags(report)
    recheck_flags = {a.option_strings[0] for a in report._actions if a.option_strings[0].startswith("--recheck-")}
    assert recheck_flags == {a.option_strings[0] for a in ours._actions if a.option_strings[0].startswith("--recheck-")}
    assert from_flags(RecheckOptions, ours.parse_args([]), skip=("strict_recheck",)) == RecheckOptions()


def test_cli_default_tool_command_is_the_tools_binary_on_path(recheck_tools, tmp_path):
    paths, project = recheck_tools
    gt = {"formal_statement": STATEMENT, "name": "t1", "header": HEADER}
    log = _write_log(tmp_path / "v.jsonl", [{**gt, "output": output(), "verdict": "valid", "score": 1.0, "infra": 0}])
    assert cli.main(["--log", str(log), "--recheck-project", str(project), "--recheck-tool", "safeverify",
                     "--recheck-lake", str(paths["lake"])]) == 0
    (row,) = [json.loads(line) for line in (tmp_path / "v.recheck.jsonl").read_text().splitlines()]
    assert row["status"] == "confirmed" and row["message"] == "SafeVerify check passed."


def test_cli_an_out_it_cannot_write_is_one_error_before_any_tool_runs(recheck_tools, tmp_path, capsys):
    project = recheck_tools[1]
    log = _write_log(tmp_path / "a.jsonl", [])
    blocker = tmp_path / "a_file"
    blocker.write_text("kept")
    assert cli.main(["--log", str(log), "--recheck-project", str(project), "--recheck-tool", "lean4checker",
                     "--out", str(blocker / "r.jsonl")]) == 2
    assert capsys.readouterr().err == (f"error: --out {blocker / 'r.jsonl'}: {blocker} is a file, so no folder can be "
                                       "made there (choose another path)\n")
    assert blocker.read_text() == "kept"


# ------------------------------------------------------------------ issue 57: a checker out of a resource is infra

@pytest.mark.parametrize("exhausted", ["(kernel) deep recursion detected", "(kernel) deterministic timeout",
                                       "maximum recursion depth has been reached"])
def test_a_checker_that_runs_out_of_a_resource_gives_no_verdict(exhausted):
    """The kernel giving up (deep recursion, a timeout) says nothing about the proof: infra, never a cheat."""
    checker = ToolRun(1, "Searching for modules matching: [M.X]\n",
                      f"lean4checker found a problem in M.X\nuncaught exception: {exhausted}")
    assert classify_lean4checker(checker, "M.X", 10)[0] == "infra"
    safe = ToolRun(1, "", f"Replaying /p/Target.olean\nReplaying /p/Submission.olean\nuncaught exception: {exhausted}")
    assert lean_env.recheck.safeverify.classify_safeverify(safe, Path("/p/Target.olean"), 10)[0] == "infra"
    comparator = ToolRun(1, "Building A.Challenge\nExporting #[t1] from A.Challenge\nBuilding A.Solution\n"
                            "Exporting #[t1] from A.Solution\nRunning Lean default kernel on solution.\n",
                         f"uncaught exception: {exhausted}")
    assert lean_env.recheck.comparator.classify_comparator(comparator, "A.Challenge", 10)[0] == "infra"
