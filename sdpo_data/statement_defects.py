"""Statements the field has reported as wrongly formalised, flagged in the prepared rows (issue 57).

Contract: `statement_defect(dataset, name, statement)` is the reason a row's statement is known to be defective, or
None. A row is flagged only when its name is listed AND its statement still holds the defective text (whitespace
ignored), so a repaired copy of the same theorem (Goedel-Prover-V2's, AI-MO's) is not flagged. The flag travels in
`extra_info.statement_defect` ("" when none); such a row is never a discovery or part of pass@k unless asked
(datasets/minif2f.md says how the reports read).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

DEEPSEEK_26 = "https://github.com/deepseek-ai/DeepSeek-Prover-V1.5/issues/26"
KIMINA_11 = "https://github.com/MoonshotAI/Kimina-Prover-Preview/issues/11"
_PHANTOM = ("the big-operator body is not parenthesised, so `{var}` escapes its binder and autoImplicit makes it a "
            "phantom universally quantified variable")


@dataclass(frozen=True)
class Defect:
    """One reported defect: the text that shows it in the statement, why it is wrong, and who reported it."""

    marker: str
    reason: str
    sources: tuple[str, ...]


KNOWN_DEFECTS: dict[str, dict[str, Defect]] = {
    "minif2f": {
        "induction_pord1p1on2powklt5on2": Defect("Finset.Icc 1 n, 1 + (1 : ℝ) / 2 ^ k)", _PHANTOM.format(var="k"),
                                                 (DEEPSEEK_26,)),
        "induction_prod1p1onk3le3m1onn": Defect("Finset.Icc 1 n, 1 + (1 : ℝ) / k ^ 3)", _PHANTOM.format(var="k"),
                                                (DEEPSEEK_26,)),
        "amc12a_2021_p9": Defect("Finset.range 7, 2 ^ 2 ^ k + 3 ^ 2 ^ k)", _PHANTOM.format(var="k"), (DEEPSEEK_26,)),
        "mathd_algebra_342": Defect("Finset.range 5, a + k * d)", _PHANTOM.format(var="k"), (DEEPSEEK_26,)),
        "mathd_algebra_158": Defect("Finset.range 8, 2 * k + 1)", _PHANTOM.format(var="k") + "; its hypotheses "
                                    "then contradict each other (parity), so it is vacuously true", (DEEPSEEK_26,)),
        "mathd_algebra_314": Defect("(1 / 4) ^ (n + 1)", "`1 / 4` has no `ℝ` ascription: over ℕ it is 0 and the "
                                    "statement is 0 = 0", (DEEPSEEK_26, KIMINA_11)),
    },
}


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def statement_defect(dataset: str, name: str, statement: str) -> str | None:
    """Why the row `name` of `dataset` is known to be wrongly formalised (with its sources), or None."""
    defect = KNOWN_DEFECTS.get(dataset, {}).get(name)
    if defect is None or _squash(defect.marker) not in _squash(statement):
        return None
    return f"{defect.reason} (reported: {', '.join(defect.sources)})"


def flagged_rows(paths) -> dict[str, str]:
    """{problem name: its defect} of the rows of prepared parquet files `paths` that carry a non-empty
    `extra_info.statement_defect` (files prepared before the flag carry none)."""
    import pandas as pd

    flagged: dict[str, str] = {}
    for path in paths:
        for extra in pd.read_parquet(path, columns=["extra_info"])["extra_info"]:
            reason = (extra or {}).get("statement_defect") or ""
            if reason:
                flagged[extra["name"]] = reason
    return flagged


def left_out(names, flagged: dict[str, str], counting: str) -> dict[str, str]:
    """{name: defect} of the `names` (in their order) that `flagged` lists, announced in one printed line that ends
    with what --count-defective does in the caller (`counting`): what a report or pass@k leaves out."""
    out = {name: flagged[name] for name in names if name in flagged}
    if out:
        print(f"left out {len(out)} problems whose statement is flagged as defective: {', '.join(out)} "
              f"(--count-defective {counting})")
    return out
