"""One grading worker process, `python -m reward.math.worker`, started and killed by `reward.math.grader`.

Protocol (JSON lines): it prints "ready" once its imports are done, then answers each request line
{"prediction", "reference", "rounded_irrationals"} with {"equal", "key"} (`answers_equal`, and
`canonical(prediction)` as the maj@k vote key) or {"error"} (reported to the caller as infra; the worker lives on).
Nothing imports this module: run as `__main__`, it is not already in sys.modules when runpy executes it (runpy warns
when the module it runs was imported by its own package's `__init__`, as `reward.math.grader` is).
"""
from __future__ import annotations

import json
import logging
import signal
import sys


def serve() -> None:
    """The request loop over stdin/stdout until stdin closes."""
    # Ctrl-C in a terminal reaches the whole process group: the caller decides (its grades in flight still come back)
    # and ends the worker by closing stdin or killing it; a KeyboardInterrupt here would print a traceback of its own
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("math_verify").setLevel(logging.ERROR)  # it warns that its own (SIGALRM) limit is off
    protocol, sys.stdout = sys.stdout, sys.stderr  # a library's print() must not corrupt the reply lines
    from reward.math.canonical import canonical
    from reward.math.equal import answers_equal

    answers_equal("1/2", "0.5")  # import sympy and latex2sympy before saying ready
    print("ready", file=protocol, flush=True)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            reply = {"equal": answers_equal(request["prediction"], request["reference"],
                                            bool(request.get("rounded_irrationals", False))),
                     "key": canonical(request["prediction"])}
        except Exception as e:  # reported to the caller as infra; the worker lives on
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), file=protocol, flush=True)


if __name__ == "__main__":
    serve()
