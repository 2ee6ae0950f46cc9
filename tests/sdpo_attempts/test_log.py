"""The attempt log (sdpo_attempts.log): per-problem attempt counts, infra samples logged without spending one,
resume."""
from __future__ import annotations

import json

import pytest

from sdpo_attempts.log import AttemptLog, read_records


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


def test_a_log_cut_mid_line_by_a_killed_run_resumes_and_sets_the_half_line_aside(tmp_path):
    """A run killed while writing leaves half a line: the resumed run continues the counts, its appends stay whole
    lines, and the half line is kept beside the log (attempts.jsonl.cut) with a warning, not dropped silently."""
    path = tmp_path / "attempts.jsonl"
    log = AttemptLog(str(path), method="sdpo", run_id="r1", seed=3)
    sample = dict(problem="p", response_tokens=10, score=0.0, verdict="lean_error", infra=0.0)
    log.record(1, [sample, sample])
    path.write_text(path.read_text() + '{"problem": "p", "method": "sd')
    with pytest.warns(UserWarning, match="cut last line"):
        resumed = AttemptLog(str(path), method="sdpo", run_id="r1", seed=3)
    assert resumed.record(2, [sample])[0]["attempt"] == 3
    assert [json.loads(line)["attempt"] for line in path.read_text().splitlines()] == [1, 2, 3]
    assert (tmp_path / "attempts.jsonl.cut").read_text() == '{"problem": "p", "method": "sd\n'
    with pytest.warns(UserWarning, match="cut last line"):
        assert [r["attempt"] for r in read_records(_cut_copy(path, tmp_path))] == [1, 2, 3]


def test_a_bad_line_inside_the_log_is_an_error_not_a_cut(tmp_path):
    path = tmp_path / "attempts.jsonl"
    path.write_text('{"problem": "p", "attempt": 1}\nnot json\n{"problem": "p", "attempt": 2}\n')
    with pytest.raises(ValueError, match="line 2"):
        read_records(path)


def test_a_whole_last_record_without_its_newline_is_kept_and_the_next_append_starts_a_new_line(tmp_path):
    path = tmp_path / "attempts.jsonl"
    log = AttemptLog(str(path), method="sdpo", run_id="r1", seed=3)
    log.record(1, [dict(problem="p", response_tokens=1, score=0.0, verdict=None, infra=0.0)])
    path.write_text(path.read_text().rstrip("\n"))
    resumed = AttemptLog(str(path), method="sdpo", run_id="r1", seed=3)
    resumed.record(2, [dict(problem="p", response_tokens=1, score=0.0, verdict=None, infra=0.0)])
    assert [r["attempt"] for r in read_records(path)] == [1, 2]


def _cut_copy(path, tmp_path):
    copy = tmp_path / "copy.jsonl"
    copy.write_text(path.read_text() + '{"problem": "p", "att')
    return copy
