"""The Kimina client's acceptance checks against the REAL kimina-lean-server code, with the REPL double behind it.

  python bench/lean/kimina_real_server.py --server-dir /tmp/kimina-lean-server \\
      --server-python /tmp/kimina_venv/bin/python
The server's code is not part of this repository; get it and its dependencies yourself, e.g.
  git clone https://github.com/project-numina/kimina-lean-server /tmp/kimina-lean-server   (checked: @fb2393d)
  python -m venv /tmp/kimina_venv && /tmp/kimina_venv/bin/pip install fastapi==0.116.1 uvicorn==0.35.0 \\
      pydantic==2.11.7 pydantic-settings==2.10.1 loguru psutil rich google-cloud-logging httpx colorama tabulate \\
      pygments tenacity python-dotenv requests tqdm
Each scenario starts `python -m server` (uvicorn, 127.0.0.1) with LEAN_SERVER_* settings; its `lake env <repl>` runs
a `lake` shim that execs `python -m lean_env.testing.fake_repl` (rules: CRASH exits mid-answer, HANG never answers,
BAD is a Lean error). A stand-in `prisma` module replaces the un-generated Prisma client (no database is used).
Scenarios: raw protocol probes (422 on a fractional timeout, 401 on a wrong key, 500 for a whole batch with one
crash), then through `KiminaBackend`: a batch with one crashing and one hanging proof and more proofs than REPLs
at a fractional timeout; a wrong API key; 429s from a too-small server; a header import longer than the proof
limit; a server killed and restarted mid-run. Writes bench/lean/results/kimina_real_server.json.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import httpx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from lean_env import Outcome, Snippet  # noqa: E402
from lean_env.backends.kimina import KiminaBackend  # noqa: E402

KEY = "bench-key"
RULES = [{"match": "BAD", "outcome": "error", "message": "unsolved goals"}, {"match": "HANG", "outcome": "hang"},
         {"match": "CRASH", "outcome": "crash"}]


def snip(i: int, tactic: str = "norm_num") -> Snippet:
    return Snippet(str(i), "import Mathlib\nimport Aesop\n",
                   f"\ntheorem t{i} : True := by\n  {tactic}\n\n#print axioms t{i}\n")


def kind(r) -> str:
    if r.outcome is not Outcome.OK:
        return r.outcome.value
    return "error" if any(m.severity == "error" for m in r.messages) else "valid"


def expected(tactic: str) -> str:
    return {"BAD": "error", "HANG": "timeout", "CRASH": "infra"}.get(tactic, "valid")


class Server:
    """`python -m server` from `server_dir` with the REPL double; kill() also kills its REPL process groups."""

    def __init__(self, args: argparse.Namespace, work: str, *, repls: int, max_wait: int = 60,
                 import_delay: float = 0.2, proof_delay: float = 0.2):
        self.args, self.work, self.port = args, work, _free_port()
        shim = os.path.join(work, "bin")
        os.makedirs(shim, exist_ok=True)
        _script(os.path.join(shim, "lake"), 'shift\nexec "$@"')   # `lake env <repl>` -> `<repl>`
        repl = os.path.join(work, f"repl_{import_delay}_{proof_delay}")
        _script(repl, f'cd {ROOT}\nexec {sys.executable} -m lean_env.testing.fake_repl '
                      f'--import-delay {import_delay} --proof-delay {proof_delay}')
        stub = os.path.join(work, "stubs", "prisma")
        os.makedirs(stub, exist_ok=True)
        with open(os.path.join(stub, "__init__.py"), "w") as f:
            f.write("class Prisma:\n    async def connect(self):\n        raise RuntimeError('no database')\n\n"
                    "    async def disconnect(self):\n        pass\n")
        self.env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "LEAN_SERVER_API_KEY": KEY,
                    "LEAN_SERVER_MAX_REPLS": str(repls), "LEAN_SERVER_MAX_WAIT": str(max_wait),
                    "LEAN_SERVER_REPL_PATH": repl, "LEAN_SERVER_PROJECT_DIR": work, "LEAN_SERVER_HOST": "127.0.0.1",
                    "LEAN_SERVER_PORT": str(self.port), "LEAN_SERVER_LOG_LEVEL": "WARNING",
                    "FAKE_REPL_RULES": json.dumps(RULES),
                    "PYTHONPATH": os.pathsep.join([os.path.join(work, "stubs"), os.path.join(args.server_dir, "client"),
                                                   args.server_dir])}
        self.proc: subprocess.Popen | None = None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = os.path.join(self.work, f"server_{self.port}.log")
        with open(log, "a") as sink:   # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen([self.args.server_python, "-m", "server"], cwd=self.args.server_dir,
                                         env=self.env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"server did not start; see {log}")

    def kill(self) -> None:
        """SIGKILL the server's process group and every REPL session it started (they run under setsid)."""
        if self.proc is None:
            return
        groups = {os.getpgid(p) for p in _descendants(self.proc.pid)}
        for group in groups | {self.proc.pid}:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self.proc = None


def _script(path: str, body: str) -> None:
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True, check=True).stdout.split()
    children: dict[int, list[int]] = {}
    for child, parent in zip(map(int, out[::2]), map(int, out[1::2])):
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return [p for p in found if _alive(p)]


def _alive(pid: int) -> bool:
    try:
        os.getpgid(pid)
        return True
    except ProcessLookupError:
        return False


class Recording(httpx.AsyncHTTPTransport):
    """Real HTTP, plus the status of every answer ("refused"/"reset" for transport errors)."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: list = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            response = await super().handle_async_request(request)
        except httpx.ConnectError:
            self.statuses.append("refused")
            raise
        except httpx.TransportError:
            self.statuses.append("reset")
            raise
        self.statuses.append(response.status_code)
        return response


async def _client_run(server: Server, tactics: list[str], timeout_s: float, during=None, **kw) -> dict:
    transport = Recording()
    backend = KiminaBackend(server.url, kw.pop("api_key", KEY), backoff_s=0.2, max_backoff_s=2.0, transport=transport,
                            **kw)
    try:
        calls = [backend.run([snip(i, t)], timeout_s=timeout_s) for i, t in enumerate(tactics)]
        side = [asyncio.ensure_future(during())] if during else []
        results = [r for (r,) in await asyncio.gather(*calls)]
        await asyncio.gather(*side)
    finally:
        await backend.aclose()
    got = [kind(r) for r in results]
    want = [expected(t) for t in tactics]
    statuses = {str(k): transport.statuses.count(k) for k in dict.fromkeys(transport.statuses)}
    return {"expected": want, "got": got, "requests": backend.requests_sent, "answers": statuses, "ok": got == want,
            "infra_details": sorted({r.infra_detail[:120] for r in results if r.outcome is Outcome.INFRA})}


def _probe(server: Server, body: dict, key: str | None = KEY) -> dict:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    r = httpx.post(server.url + "/api/check", json=body, headers=headers, timeout=60)
    return {"status": r.status_code, "body": r.text[:300]}


def scenarios(args: argparse.Namespace, work: str) -> dict:
    out: dict = {}
    code = snip(0).code
    mixed = ["norm_num", "BAD", "CRASH", "norm_num", "HANG", "BAD",
             "norm_num", "norm_num", "BAD", "norm_num", "norm_num", "BAD"]
    server = Server(args, work, repls=3)
    server.start()
    try:
        out["probe_fractional_timeout"] = _probe(server, {"snippets": [{"id": "a", "code": code}], "timeout": 2.5})
        out["probe_wrong_key"] = _probe(server, {"snippets": [{"id": "a", "code": code}]}, key="wrong")
        out["probe_one_crash_in_batch"] = _probe(server, {"timeout": 10, "snippets": [
            {"id": "a", "code": code}, {"id": "b", "code": snip(1, "CRASH").code}, {"id": "c", "code": code}]})
        out["crash_hang_more_proofs_than_repls_fractional_timeout"] = asyncio.run(
            _client_run(server, mixed, 2.5, batch_size=8, server_repls=12))
        out["wrong_api_key"] = asyncio.run(_client_run(server, ["norm_num", "BAD"], 10, api_key="wrong"))
        out["wrong_api_key"]["ok"] = out["wrong_api_key"]["got"] == ["infra", "infra"]
    finally:
        server.kill()
    server = Server(args, work, repls=2, max_wait=1, proof_delay=0.6)
    server.start()
    try:
        out["no_free_repl_429"] = asyncio.run(_client_run(server, ["norm_num", "BAD"] * 8, 10, server_repls=16,
                                                          busy_retries=20))
    finally:
        server.kill()
    server = Server(args, work, repls=2, import_delay=3.0)
    server.start()
    try:
        out["header_import_longer_than_proof_limit"] = asyncio.run(
            _client_run(server, ["norm_num", "BAD"], 2, server_repls=2, import_timeout_s=20))
    finally:
        server.kill()
    server = Server(args, work, repls=2, proof_delay=0.3)
    server.start()

    async def restart() -> None:
        await asyncio.sleep(1.0)
        await asyncio.to_thread(server.kill)
        await asyncio.sleep(2.0)
        await asyncio.to_thread(server.start)
    try:
        out["server_restarted_mid_run"] = asyncio.run(
            _client_run(server, ["norm_num", "BAD", "norm_num"] * 8, 10, during=restart, server_repls=2))
    finally:
        server.kill()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server-dir", default=os.environ.get("KIMINA_SERVER_DIR", "/tmp/kimina-lean-server"))
    p.add_argument("--server-python", default=os.environ.get("KIMINA_SERVER_PYTHON", "/tmp/kimina_venv/bin/python"))
    p.add_argument("--server-commit", default=None, help="the server's commit, when --server-dir is no git checkout")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "lean", "results", "kimina_real_server.json"))
    args = p.parse_args()
    commit = args.server_commit or subprocess.run(["git", "-C", args.server_dir, "rev-parse", "HEAD"],
                                                  capture_output=True, text=True, check=False).stdout.strip()
    with tempfile.TemporaryDirectory() as work:
        results = scenarios(args, work)
    summary = {name: r.get("ok", r.get("status")) for name, r in results.items()}
    out = {"command": " ".join(["python", *sys.argv]), "server_commit": commit or "unknown (not a git checkout)",
           "summary": summary, "scenarios": results}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
