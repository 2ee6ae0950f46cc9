"""miniF2F / ProofNet records -> screened Lean problems -> verl parquet rows.

Screening excludes, with a reason each: missing or empty statements, statements whose declaration is
commented out (`--` or `/- -/`), statements with no `theorem`/`lemma`/`def` declaration carrying the
row's name, unknown splits, and exact repeats (same name and statement; the first is kept).
Rows that share a name but state different theorems (ProofNet: 19 names reused across textbooks) are
all kept; each later one gets a unique id `<name>__<k>` (k = 2, 3, ...) used as `extra_info.name`,
while the ground truth keeps the declared name that Lean checks. `def` statements are kept (14
ProofNet rows) because the Lean reward accepts them.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from lean_env.text import blank_comments
from sdpo_data.prompts import build_prompt
from sdpo_data.statement_defects import statement_defect

DEEPSEEK_HEADER = (
    "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n"
)


@dataclass(frozen=True)
class LeanDataset:
    """What the dataset card pins down (see datasets/<name>.md)."""

    name: str
    splits: tuple[str, ...]
    lean_version: str
    mathlib: str
    default_header: str


LEAN_DATASETS: dict[str, LeanDataset] = {
    "minif2f": LeanDataset("minif2f", ("valid", "test"), "v4.9.0", "xinhjBrant/mathlib4@2f65ba7", DEEPSEEK_HEADER),
    "proofnet": LeanDataset(
        "proofnet", ("valid", "test"), "v4.9.0", "xinhjBrant/mathlib4@2f65ba7", "import Mathlib\n\n"
    ),
}

FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "name": ("name", "id", "problem_name", "full_name"),
    "formal_statement": ("formal_statement",),
    "header": ("header",),
    "informal_prefix": ("informal_prefix", "informal_stmt", "nl_statement", "informal_statement"),
    "split": ("split", "_hf_split"),
}
SPLIT_ALIASES = {"validation": "valid", "val": "valid", "dev": "valid"}
_DECL = re.compile(
    r"(?m)^[ \t]*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*(theorem|lemma|def)\s+([^\s:({\[]+)"
)


@dataclass(frozen=True)
class LeanProblem:
    """One screened Lean problem, ready to become a verl row."""

    id: str                        # unique problem id (extra_info.name): the name, or `<name>__<k>` on a clash
    name: str                      # the declared theorem name (what Lean checks)
    split: str
    formal_statement: str
    header: str
    informal_prefix: str
    kind: str                      # theorem | lemma | def
    header_defaulted: bool = False


@dataclass
class ScreenReport:
    """The problems a dataset screen kept, and those it excluded with a reason each."""

    kept: list[LeanProblem] = field(default_factory=list)
    excluded: list[tuple[int, str, str]] = field(default_factory=list)   # (record index, name, reason)

    def reasons(self) -> Counter:
        """How many records were excluded for each kind of reason."""
        return Counter(reason.split(":")[0] for _, _, reason in self.excluded)


def _field(record: dict[str, Any], key: str) -> Any:
    for alias in FIELD_ALIASES[key]:
        if record.get(alias) is not None:
            return record[alias]
    return None


def statement_problem(statement: str, name: str) -> str | None:
    """Why `statement` cannot serve as the row `name`'s theorem, or None when it can."""
    if not statement.strip():
        return "empty statement"
    live = list(_DECL.finditer(blank_comments(statement)))
    if not any(m.group(2) == name for m in live):
        if re.search(rf"\b(?:theorem|lemma|def)\s+{re.escape(name)}(?![\w'.])", statement):
            return "commented out: the declaration is inside a comment"
        if not live:
            return "no declaration: no theorem/lemma/def outside comments"
        return f"name mismatch: declares {', '.join(m.group(2) for m in live)}"
    if not blank_comments(statement).rstrip().endswith((":=", "by", "sorry")):
        return "malformed statement: does not end with `:=`, `:= by` or `sorry`"
    return None


def screen_records(records: Iterable[dict[str, Any]], dataset: LeanDataset) -> ScreenReport:
    """Keep the usable problems of `records` (input order) and list the others with their reasons."""
    report, seen, uses = ScreenReport(), set(), Counter()
    for index, record in enumerate(records):
        name, statement = _field(record, "name"), _field(record, "formal_statement")
        split = SPLIT_ALIASES.get(str(_field(record, "split")), str(_field(record, "split")))
        if not isinstance(name, str) or not name.strip():
            report.excluded.append((index, str(name), "missing name"))
            continue
        if not isinstance(statement, str):
            report.excluded.append((index, name, "missing statement"))
            continue
        if split not in dataset.splits:
            report.excluded.append((index, name, f"unknown split: {split!r} (expected {list(dataset.splits)})"))
            continue
        problem = statement_problem(statement, name)
        if problem is None and (name, statement) in seen:
            problem = "duplicate: an earlier row has the same name and statement"
        if problem is not None:
            report.excluded.append((index, name, problem))
            continue
        seen.add((name, statement))
        uses[name] += 1
        header = _field(record, "header")
        kind = next(m.group(1) for m in _DECL.finditer(blank_comments(statement)) if m.group(2) == name)
        report.kept.append(LeanProblem(
            id=name if uses[name] == 1 else f"{name}__{uses[name]}", name=name, split=split, formal_statement=statement,
            header=header if isinstance(header, str) and header.strip() else dataset.default_header,
            informal_prefix=str(_field(record, "informal_prefix") or ""), kind=kind,
            header_defaulted=not (isinstance(header, str) and header.strip()),
        ))
    return report


def verl_row(problem: LeanProblem, index: int, dataset: LeanDataset, prompt_style: str,
             lean_version: str | None = None) -> dict[str, Any]:
    """One verl RLHFDataset row; `reward_model.ground_truth` is the JSON task read by `reward.lean`."""
    defect = statement_defect(dataset.name, problem.name, problem.formal_statement) or ""
    ground_truth = {"name": problem.name, "formal_statement": problem.formal_statement, "header": problem.header,
                    "lean_version": lean_version or dataset.lean_version}
    return {
        "data_source": dataset.name,
        "prompt": build_prompt(prompt_style, problem.formal_statement, problem.header, problem.informal_prefix),
        "ability": "lean4",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(ground_truth, ensure_ascii=False)},
        "extra_info": {"name": problem.id, "split": problem.split, "index": index,
                       "informal_prefix": problem.informal_prefix,
                       "statement_defect": defect},
    }
