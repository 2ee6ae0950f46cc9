"""A grading worker outlives a Ctrl-C sent to its process group: it prints no traceback and answers the request in
flight, so the evaluation that stops keeps that grade (`sdpo_eval.math_eval`)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path


def test_a_ctrl_c_reaches_the_worker_and_it_answers_on():
    root = str(Path(__file__).parents[3])
    worker = subprocess.Popen([sys.executable, "-m", "reward.math.worker"], cwd=root, text=True,
                              env={**os.environ, "PYTHONPATH": root}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    assert worker.stdout.readline().strip() == "ready"
    worker.send_signal(signal.SIGINT)
    worker.stdin.write(json.dumps({"prediction": "0.5", "reference": "1/2"}) + "\n")
    worker.stdin.flush()
    assert json.loads(worker.stdout.readline())["equal"] is True
    _, err = worker.communicate(timeout=30)   # stdin closes: the worker ends
    assert worker.returncode == 0 and "Traceback" not in err
