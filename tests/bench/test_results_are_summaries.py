"""Each experiment's results/ (bench/<experiment>/results) keeps summaries only (JSON, PNG, the exact command); raw
logs live in the git-ignored bench/<experiment>/raw."""
from tests.bench.bench_scripts import BENCH

SUMMARY_SUFFIXES = {".json", ".png"}


def test_results_hold_only_summaries():
    files = [p for results in BENCH.glob("*/results") for p in results.rglob("*") if p.is_file()]
    raw = [str(p.relative_to(BENCH)) for p in files
           if p.suffix not in SUMMARY_SUFFIXES and not p.name.endswith("_command.txt")]
    assert files and raw == [], f"raw files in bench/*/results (move them to that experiment's raw/): {raw}"


def test_scripts_and_results_sit_in_their_experiment_folder():
    """bench/ itself holds only the index README: each script and each result is under bench/<experiment>/."""
    assert sorted(p.name for p in BENCH.iterdir() if p.is_file()) == ["README.md"]
    assert not [p for p in (BENCH / "results").rglob("*") if p.is_file()]
