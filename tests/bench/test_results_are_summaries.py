"""bench/results keeps summaries only (JSON, PNG, the exact command); raw logs live in the git-ignored bench/raw."""
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"
SUMMARY_SUFFIXES = {".json", ".png"}


def test_results_hold_only_summaries():
    files = [p for p in RESULTS.rglob("*") if p.is_file()]
    raw = [str(p.relative_to(RESULTS)) for p in files
           if p.suffix not in SUMMARY_SUFFIXES and not p.name.endswith("_command.txt")]
    assert files and raw == [], f"raw files in bench/results (move them to bench/raw): {raw}"
