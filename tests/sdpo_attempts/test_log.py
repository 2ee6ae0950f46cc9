"""The attempt log (sdpo_attempts.log): per-problem attempt counts, infra samples logged without spending one,
resume."""
from __future__ import annotations

from sdpo_attempts.log import AttemptLog


def test_attempt_log_counts_per_problem_skips_infra_and_resumes(tmp_path):
    path = tmp_path / "attempts.jsonl"
    log = AttemptLog(str(path), method="sdpo", run_id="r1", seed=3)
    sample = dict(response_tokens=10, score=0.0, verdict="lean_error", infra=0.0)
    recs = log.record(1, [dict(sample, problem="p"), dict(sample, problem="p", infra=1.0, verdict="infra"),
                          dict(sample, problem="q"),
                          dict(sample, problem="p", verdict="valid", score=1.0, proof="by simp")])
    assert [r["attempt"] for r in recs] == [1, 1, 1, 2]
    assert recs[1]["infra"] == 1 and recs[3]["proof"] == "by simp"
    resumed = AttemptLog(str(path), method="sdpo", run_id="r1", seed=3)
    assert resumed.record(2, [dict(sample, problem="p")])[0]["attempt"] == 3
    assert len(path.read_text().splitlines()) == 5
