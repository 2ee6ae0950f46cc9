"""Out-of-process re-check of what the discovery and pass@k reports count (issue 48, item 2).

The training reward stays on the fast path: one Lean process elaborates the model's code and prints the audit the
judge trusts. A report counts few proofs: per discovery run and problem the first valid attempt within the budget,
per pass@k problem its valid samples. Before one counts, it is re-checked here against the reference statement by a
tool that builds a trusted challenge from the dataset's statement and compares the solution with it in a separate
Lean process (`lean_env.recheck`: comparator or SafeVerify; lean4checker is refused, since it recompiles the checked
file and trusts the messages that file prints). Settings: the `recheck_*` fields of `lean_env.options.RecheckOptions`.

Contract, per counted proof (statuses of `lean_env.recheck.run`):
  confirmed  counts as the fast path judged it
  rejected   a cheat: verdict `cheat`, score 0, listed in the report's `recheck.cheats`, never a discovery; a
             discovery run moves on to its next valid attempt within the budget, re-checked the same way
  infra      unverified (tool missing, crashed, timed out, no proof stored): never a cheat, never a discovery, listed
             in `recheck.unverified`. A discovery run is then known only up to the attempt before it (that attempt
             and the later ones leave the count as infra attempts do: the run is censored there); a pass@k sample
             leaves the denominators as an infra sample does. The CLIs write the report and exit 1 (fail closed).
A discovery problem whose reference row is not Lean (`ability` other than lean4: MATH, the demo's addition) has no
statement to re-check against: it is listed in `recheck.not_lean` and counts as its reward judged it.
`recheck.status`: "done"; "incomplete" (some proof unverified); "off" (--no-recheck: the report is not re-checked).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import shutil
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lean_env.options import RecheckOptions
from lean_env.recheck import RecheckJob, RecheckResult, ToolSetup, preflight, recheck
from lean_env.verify import Task
from reward.lean.score import parse_ground_truth
from sdpo_attempts.log import within_budget
from sdpo_attempts.valid import valid_record
from sdpo_options.flags import add_flags, from_flags

REPORT_TOOLS = ("comparator", "safeverify")   # compare with a challenge built from the reference statement
OR_OFF = "or --no-recheck to report without the re-check"
OFF = {"status": "off", "note": "not re-checked (--no-recheck): counted proofs are the fast path's verdicts"}


@dataclasses.dataclass(frozen=True)
class ReportRecheck:
    """How a report re-checks what it counts: the tool's settings and how many tool runs go at once."""

    cfg: ToolSetup
    workers: int = 1

    @classmethod
    def from_options(cls, options: RecheckOptions, project_flag: str) -> ReportRecheck:
        """The re-check of `options`; ValueError naming `project_flag` and the fix when it cannot run here."""
        if options.recheck_tool not in REPORT_TOOLS:
            raise ValueError(f"recheck_tool {options.recheck_tool} recompiles the checked file and trusts its "
                             f"messages: a report re-checks against the reference statement (use one of "
                             f"{REPORT_TOOLS}, {OR_OFF})")
        if not options.recheck_project:
            raise ValueError(f"the report re-checks each counted proof out of process and needs a Lean project: "
                             f"{project_flag} (Mathlib at the dataset's toolchain; docs/lean.md, offline "
                             f"re-check), {OR_OFF}")
        cfg = ToolSetup.from_options(options, keep_files=True)   # stable keys: a re-run overwrites
        preflight(cfg)
        if shutil.which(cfg.lake_command[0]) is None:
            raise ValueError(f"{cfg.lake_command[0]} is not on PATH: the re-check runs the tool with `lake env` in "
                             f"{cfg.project} (install the Lean toolchain, {OR_OFF})")
        return cls(cfg, options.recheck_workers)

    def run(self, jobs: Sequence[RecheckJob]) -> list[RecheckResult]:
        """One result per job, in order (`lean_env.recheck.recheck`; never raises for a job)."""
        return recheck(jobs, self.cfg, workers=self.workers, progress=sys.stderr.isatty()) if jobs else []


def job_key(*parts: object) -> str:
    """A stable key for one counted proof (a Lean module name component)."""
    return "R" + hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:12]


def job(key: str, task: Task, proof: Any) -> RecheckJob | RecheckResult:
    """The re-check job of a stored proof, or its infra result when none is stored."""
    if not isinstance(proof, str):
        return RecheckResult(key, "infra", "no proof stored for this attempt (the attempt log's `proof`)")
    return RecheckJob(key, task, proof)


def run_jobs(tool: ReportRecheck, items: Sequence[RecheckJob | RecheckResult]) -> list[RecheckResult]:
    """Results for `items` in order: the jobs run, the ready results kept."""
    results = iter(tool.run([item for item in items if isinstance(item, RecheckJob)]))
    return [item if isinstance(item, RecheckResult) else next(results) for item in items]


def section(tool: ReportRecheck | None, checked: int, cheats: list[dict], unverified: list[dict]) -> dict[str, Any]:
    """The report's `recheck` block."""
    return {"status": "incomplete" if unverified else "done", "tool": tool.cfg.tool if tool else None,
            "checked": checked, "confirmed": checked - len(cheats) - len(unverified), "cheats": cheats,
            "unverified": unverified}


# ------------------------------------------------------------------ discovery

def reference_tasks(paths: Sequence[Path]) -> dict[str, Task | None]:
    """{problem name: its reference Task, or None when the row is not Lean} from prepared parquet files."""
    import pandas as pd

    tasks: dict[str, Task | None] = {}
    for path in paths:
        frame = pd.read_parquet(Path(path).expanduser(), columns=["ability", "reward_model", "extra_info"])
        for row in frame.to_dict(orient="records"):
            name = row["extra_info"]["name"]
            try:
                tasks[name] = parse_ground_truth(row["reward_model"]["ground_truth"]) \
                    if row["ability"] == "lean4" else None
            except ValueError as e:
                raise ValueError(f"--data {path}: problem {name}: {e} (prepare the data again: sdpo_data.prepare)")
    return tasks


def _run(rec: Mapping[str, Any]) -> tuple:
    return rec["method"], rec["problem"], int(rec.get("seed") or 0), rec["run_id"]


def _counted_candidates(records: Sequence[dict], budget: int) -> dict[tuple, list[dict]]:
    """{run: its valid attempts within the budget, by attempt} for the problems every method attempted."""
    problems: dict[str, set] = defaultdict(set)
    for rec in records:
        problems[rec["method"]].add(rec["problem"])
    common = set.intersection(*problems.values()) if problems else set()
    runs: dict[tuple, list[dict]] = defaultdict(list)
    for rec in records:
        if rec["problem"] in common and within_budget(rec["attempt"], budget) and valid_record(rec):
            runs[_run(rec)].append(rec)
    return {run: sorted(recs, key=lambda r: r["attempt"]) for run, recs in runs.items()}


def _entry(rec: Mapping[str, Any], result: RecheckResult) -> dict[str, Any]:
    return {"method": rec["method"], "problem": rec["problem"], "seed": int(rec.get("seed") or 0),
            "run_id": rec["run_id"], "attempt": rec["attempt"], "message": result.message[:600]}


def recheck_discovery(records: Sequence[dict], budget: int, tasks: Mapping[str, Task | None],
                      make_tool: Callable[[], ReportRecheck]) -> tuple[list[dict], dict[str, Any]]:
    """(the records the discovery report counts, its `recheck` block): each run's first valid attempt within the
    budget is re-checked, a cheat's run moves on to its next one (module docstring). `make_tool` is called only when
    some proof needs the re-check; ValueError names the problems `tasks` lacks."""
    candidates = _counted_candidates(records, budget)
    missing = sorted({run[1] for run in candidates if run[1] not in tasks})
    if missing:
        raise ValueError(f"no reference statement for {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''} "
                         f"in --data (pass the prepared parquet the runs used, {OR_OFF})")
    lean = {run: recs for run, recs in candidates.items() if tasks[run[1]] is not None}
    tool = make_tool() if lean else None
    position, outcome, cheats, unverified = dict.fromkeys(lean, 0), {}, [], []
    while todo := [(run, lean[run][i]) for run, i in position.items() if i < len(lean[run])]:
        items = [job(job_key(*run, rec["attempt"]), tasks[run[1]], rec.get("proof")) for run, rec in todo]
        for (run, rec), result in zip(todo, run_jobs(tool, items)):
            outcome[id(rec)] = result
            position[run] = position[run] + 1 if result.status == "rejected" else len(lean[run])
            if result.status == "rejected":
                cheats.append(_entry(rec, result))
            elif result.status == "infra":
                unverified.append(_entry(rec, result))
    cut = {(u["method"], u["problem"], u["seed"], u["run_id"]): u["attempt"] for u in unverified}
    counted = []
    for rec in records:
        result = outcome.get(id(rec))
        if result is not None and result.status == "rejected":
            rec = {**rec, "score": 0.0, "verdict": "cheat"}
        elif _run(rec) in cut and rec["attempt"] >= cut[_run(rec)] and not rec.get("infra"):
            rec = {**rec, "infra": 1, "verdict": "unverified" if result is not None else rec.get("verdict")}
        counted.append(rec)
    block = section(tool, len(outcome), cheats, unverified)
    block["not_lean"] = sorted({run[1] for run in candidates if tasks[run[1]] is None})
    return counted, block


def add_report_flags(parser: argparse.ArgumentParser) -> None:
    """The discovery report's re-check flags: --data, --no-recheck and the `recheck_*` fields of RecheckOptions."""
    parser.add_argument("--data", type=Path, action="append", default=[],
                        help="prepared parquet with the problems' reference statements (repeatable)")
    parser.add_argument("--no-recheck", action="store_true",
                        help="count the fast path's verdicts as they are; the report says it is not re-checked")
    add_flags(parser, RecheckOptions, skip=("strict_recheck",))


def recheck_for_report(records: Sequence[dict], budget: int,
                       args: argparse.Namespace) -> tuple[list[dict], dict[str, Any]]:
    """`recheck_discovery` with the report CLI's flags (ValueError naming the fix), or the records as they are."""
    if args.no_recheck:
        return list(records), dict(OFF)
    if not args.data:
        raise ValueError(f"the report re-checks each counted proof against its reference statement: pass --data "
                         f"(the prepared parquet the runs used), {OR_OFF}")
    options = from_flags(RecheckOptions, args, skip=("strict_recheck",))
    return recheck_discovery(records, budget, reference_tasks(args.data),
                             lambda: ReportRecheck.from_options(options, "--recheck-project DIR"))


# ------------------------------------------------------------------ pass@k

def recheck_samples(problems: Sequence[dict], verdicts: dict[str, list[dict]],
                    tool: ReportRecheck | None) -> dict[str, Any]:
    """Re-check every valid sample of `verdicts` ({problem: reward dicts, a valid one carrying `proof` and
    `sample_key`}) in place: a cheat gets score 0 and verdict `cheat` (judged, not valid); an unverified one gets
    infra 1 and verdict `unverified` (out of the denominators). -> the report's `recheck` block."""
    if tool is None:
        return dict(OFF)
    todo, items = [], []
    for problem in problems:
        valid = [i for i, r in enumerate(verdicts[problem["name"]]) if valid_record(r)]
        task = parse_ground_truth(problem["ground_truth"]) if valid else None
        for i in valid:
            r = verdicts[problem["name"]][i]
            todo.append((problem["name"], i))
            items.append(job(job_key("passk", problem["name"], r.get("sample_key")), task, r.get("proof")))
    cheats, unverified = [], []
    for (name, i), result in zip(todo, run_jobs(tool, items)):
        r = verdicts[name][i]
        entry = {"problem": name, "sample_key": r.get("sample_key"), "message": result.message[:600]}
        if result.status == "rejected":
            verdicts[name][i] = {**r, "score": 0.0, "verdict": "cheat"}
            cheats.append(entry)
        elif result.status == "infra":
            verdicts[name][i] = {**r, "infra": 1.0, "verdict": "unverified"}
            unverified.append(entry)
    return section(tool, len(todo), cheats, unverified)


# ------------------------------------------------------------------ what the CLIs print

def summary_line(block: Mapping[str, Any]) -> str:
    """One line for the terminal and the markdown table."""
    if block["status"] == "off":
        return block["note"]
    line = (f"re-check ({block['tool'] or 'none needed'}): {block['checked']} counted proofs, {block['confirmed']} "
            f"confirmed, {len(block['cheats'])} cheats, {len(block['unverified'])} unverified")
    return line + (f"; not Lean, not re-checked: {', '.join(block['not_lean'])}" if block.get("not_lean") else "")


def markdown(block: Mapping[str, Any]) -> str:
    """The re-check under the first-success table: its line, then each cheat and unverified proof."""
    lines = ["", summary_line(block), ""]
    for kind in ("cheats", "unverified"):
        for e in block.get(kind, []):
            where = f"{e['method']} {e['problem']} seed {e['seed']} attempt {e['attempt']}" if "method" in e \
                else f"{e['problem']} {e['sample_key']}"
            lines.append(f"- {kind[:-1] if kind == 'cheats' else kind}: {where}: {e['message'][:200]}")
    return "\n".join(lines) + "\n"


def unverified_error(block: Mapping[str, Any], settings: str) -> str | None:
    """The one-line error of an incomplete re-check (naming the fix), or None."""
    if block["status"] != "incomplete":
        return None
    first = block["unverified"][0]["message"].splitlines()[0][:200] if block["unverified"][0]["message"] else ""
    return (f"error: {len(block['unverified'])} counted proofs got no re-check verdict and were not counted, e.g. "
            f"{first} (fix the re-check settings {settings} and report again, {OR_OFF})")
