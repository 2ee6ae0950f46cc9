"""Local REPL backend: a pool of `lake exe repl` processes keyed by header.

Each process imports its header once (env 0) and runs every body as `{"cmd": body, "env": 0}`,
so Mathlib is loaded once per process, not once per proof. Safety: processes run in their own
session/process group with RLIMIT_AS; a per-proof timeout SIGKILLs the whole group (`lake env`
forks the REPL as a child); stderr is drained continuously; a process is recycled after
`max_uses` proofs or when its tree's RSS exceeds `max_rss_mb`; a crashed, hung or babbling
process is discarded and a fresh one is started for the next proof.
Answer integrity: the REPL numbers its environments 0, 1, 2, … per process, one per command, so each proof's
answer must carry the next env id; and after reading it, a marker `#check sdpo_marker_<nonce>` (nonce drawn only
then) must be answered next, naming the nonce. Anything printed during elaboration (a forged answer) shifts the
stream and fails one of the two checks: output that breaks the protocol is INFRA, never a verdict.
"""
from __future__ import annotations

import asyncio
import collections
import json
import os
import resource
import secrets
import shlex
import signal
import time
from typing import Sequence

from lean_env.backends.common import parse_repl_response
from lean_env.types import Outcome, RunResult, Snippet

_STREAM_LIMIT = 1 << 26


class ReplFailure(Exception):
    """The process died, printed non-JSON, or failed to import its header."""


class ReplTimeout(Exception):
    """The REPL gave no answer within the request's time limit (the caller kills its process group)."""


def _rss_mb(pid: int) -> float:
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil ships with verl/ray
        return 0.0
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


class ReplProcess:
    """One REPL process that has imported `header` (imports only; may be empty)."""

    def __init__(self, argv: Sequence[str], header: str, *, cwd: str | None, env: dict | None,
                 mem_limit_mb: int | None):
        self.argv, self.header, self.cwd, self.env, self.mem_limit_mb = list(argv), header, cwd, env, mem_limit_mb
        self.proc: asyncio.subprocess.Process | None = None
        self.base_env: int | None = None
        self.next_env = 0   # the env id the REPL gives the next command
        self.uses = 0
        self._stderr_tail: collections.deque[bytes] = collections.deque(maxlen=16)
        self._drain: asyncio.Task | None = None

    def _limits(self) -> None:
        if self.mem_limit_mb:
            lim = self.mem_limit_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))

    async def start(self, import_timeout_s: float) -> None:
        """Start the process and import `header` (when not empty); ReplFailure when the import fails or takes longer
        than `import_timeout_s`."""
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, cwd=self.cwd, env=self.env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, preexec_fn=self._limits, limit=_STREAM_LIMIT,
        )
        self._drain = asyncio.create_task(self._drain_stderr())
        if self.header.strip():
            try:
                resp = await self.request({"cmd": self.header.rstrip("\n")}, import_timeout_s)
            except ReplTimeout:
                raise ReplFailure(f"header import exceeded {import_timeout_s:.0f} s") from None
            errors = [m for m in resp.get("messages", []) if isinstance(m, dict) and m.get("severity") == "error"]
            if errors or not isinstance(resp.get("env"), int):
                raise ReplFailure(f"header failed: {str(errors or resp)[:300]}")
            self.base_env = self.next_env = resp["env"]
            self.next_env += 1

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(1 << 16):
            self._stderr_tail.append(chunk[-512:])

    def stderr_tail(self) -> str:
        """The last 1000 characters the process wrote to stderr, for an INFRA detail."""
        return b"".join(self._stderr_tail)[-1000:].decode("utf-8", "replace")

    async def request(self, obj: dict, timeout_s: float) -> dict:
        """Send one request; return its decoded answer."""
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write((json.dumps(obj, ensure_ascii=False) + "\n\n").encode())
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as e:
            raise ReplFailure(f"REPL stdin closed ({e}); stderr: {self.stderr_tail()}") from None
        try:
            lines = await asyncio.wait_for(self._read_block(), timeout_s)
        except asyncio.TimeoutError:
            raise ReplTimeout() from None
        text = b"".join(lines).decode("utf-8", "replace")
        try:
            resp = json.loads(text)
        except ValueError:
            raise ReplFailure(f"REPL printed non-JSON: {text[:200]!r}") from None
        if not isinstance(resp, dict):
            raise ReplFailure(f"REPL printed a non-object: {text[:200]!r}")
        return resp

    async def command(self, body: str, timeout_s: float) -> dict:
        """Run `body` on the header env; return its answer after the env-id and marker checks."""
        base = {} if self.base_env is None else {"env": self.base_env}
        resp = await self.request({"cmd": body, **base}, timeout_s)
        if "env" in resp:
            self._expect_env(resp)
        elif not isinstance(resp.get("message"), str):
            raise ReplFailure(f"REPL answer is neither a command answer nor an error: {str(resp)[:200]}")
        marker = f"sdpo_marker_{secrets.token_hex(8)}"
        echo = await self.request({"cmd": f"#check {marker}", **base}, timeout_s)
        self._expect_env(echo)
        if marker not in json.dumps(echo.get("messages")):
            raise ReplFailure("the answer after a proof was not the marker's: output out of step with requests")
        return resp

    def _expect_env(self, resp: dict) -> None:
        if resp.get("env") != self.next_env:
            raise ReplFailure(f"answer for env {resp.get('env')!r}, expected {self.next_env}: "
                              "not this request's answer")
        self.next_env += 1

    async def _read_block(self) -> list[bytes]:
        assert self.proc is not None and self.proc.stdout is not None
        lines: list[bytes] = []
        while True:
            line = await self.proc.stdout.readline()
            if not line:
                rc = await self.proc.wait()
                raise ReplFailure(f"REPL exited with code {rc}; stderr: {self.stderr_tail()}")
            if line.strip():
                lines.append(line)
            elif lines:
                return lines

    def rss_mb(self) -> float:
        """The process's resident memory in MB (0 before it starts)."""
        return _rss_mb(self.proc.pid) if self.proc else 0.0

    @property
    def pid(self) -> int | None:
        """The process id, or None before it starts."""
        return self.proc.pid if self.proc else None

    async def kill(self) -> None:
        """SIGKILL the whole process group and reap it."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except asyncio.TimeoutError:  # pragma: no cover
            pass
        if self._drain is not None:
            self._drain.cancel()
        self.proc = None


class ReplPool:
    """LeanBackend over a pool of at most `num_repls` REPL processes, reused per header."""

    name = "repl"

    def __init__(self, command: str | Sequence[str], *, cwd: str | None = None, num_repls: int = 1,
                 max_uses: int = 500, max_rss_mb: float | None = None, mem_limit_mb: int | None = None,
                 import_timeout_s: float = 300.0, env: dict | None = None):
        if num_repls < 1:
            raise ValueError("num_repls must be >= 1")
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("empty REPL command")
        self.cwd, self.env, self.num_repls, self.max_uses = cwd, env, num_repls, max_uses
        self.max_rss_mb, self.mem_limit_mb, self.import_timeout_s = max_rss_mb, mem_limit_mb, import_timeout_s
        self._idle: list[ReplProcess] = []
        self._slots = 0
        self._cond: asyncio.Condition | None = None
        self.spawned = 0
        self.recycled = 0

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def _acquire(self, header: str) -> ReplProcess | None:
        """An idle process with this header, or None with a slot reserved for a new one."""
        cond = self._condition()
        async with cond:
            while True:
                for p in self._idle:
                    if p.header == header:
                        self._idle.remove(p)
                        return p
                if self._slots < self.num_repls:
                    self._slots += 1
                    return None
                if self._idle:
                    victim = self._idle.pop(0)   # least recently used, other header
                    await victim.kill()
                    return None
                await cond.wait()

    async def _release(self, proc: ReplProcess | None) -> None:
        cond = self._condition()
        async with cond:
            if proc is not None:
                self._idle.append(proc)
            else:
                self._slots -= 1
            cond.notify()

    async def _discard(self, proc: ReplProcess) -> None:
        await proc.kill()
        await self._release(None)

    async def check(self, snippet: Snippet, timeout_s: float) -> RunResult:
        """One snippet on an idle process that imported its header (a new one otherwise) -> its RunResult; a start
        failure or a crash is INFRA, no answer in `timeout_s` is TIMEOUT (the process is killed). Never raises but when
        cancelled."""
        proc = await self._acquire(snippet.header)
        if proc is None:
            proc = ReplProcess(self.argv, snippet.header, cwd=self.cwd, env=self.env, mem_limit_mb=self.mem_limit_mb)
            self.spawned += 1
            try:
                await proc.start(self.import_timeout_s)
            except (ReplFailure, OSError) as e:
                await self._discard(proc)
                return RunResult(snippet.id, Outcome.INFRA, 0.0, infra_detail=f"REPL start failed: {e}")
            except BaseException:   # cancelled: never leave a half-started process or a leaked slot
                await self._discard(proc)
                raise
        t0 = time.perf_counter()
        try:
            resp = await proc.command(snippet.body, timeout_s)
        except ReplTimeout:
            await self._discard(proc)
            return RunResult(snippet.id, Outcome.TIMEOUT, time.perf_counter() - t0,
                             infra_detail=f"no answer within {timeout_s:g} s (process group killed)")
        except ReplFailure as e:
            await self._discard(proc)
            return RunResult(snippet.id, Outcome.INFRA, time.perf_counter() - t0, infra_detail=str(e))
        except BaseException:   # cancelled mid-proof: the process still owes an answer, so drop it
            await self._discard(proc)
            raise
        elapsed = time.perf_counter() - t0
        proc.uses += 1
        if proc.uses >= self.max_uses or (self.max_rss_mb is not None and proc.rss_mb() > self.max_rss_mb):
            self.recycled += 1
            await self._discard(proc)
        else:
            await self._release(proc)
        result = parse_repl_response(snippet.id, resp, elapsed)
        if result.repl_error == "Unknown environment.":
            return RunResult(snippet.id, Outcome.INFRA, elapsed, infra_detail="REPL lost its header environment")
        return result

    async def run(self, snippets: Sequence[Snippet], *, timeout_s: float) -> list[RunResult]:
        """`LeanBackend.run`: `check` for every snippet at once, results in order."""
        return list(await asyncio.gather(*(self.check(s, timeout_s) for s in snippets)))

    async def health(self) -> bool:
        """Whether a fresh check of `example : True := trivial` passes without an error."""
        r = await self.check(Snippet("health", "", "example : True := trivial"), 60.0)
        return r.outcome is Outcome.OK and r.repl_error is None and not any(m.severity == "error" for m in r.messages)

    async def aclose(self) -> None:
        """Kill the idle processes (a busy one is killed when its check returns it)."""
        cond = self._condition()
        async with cond:
            idle, self._idle = self._idle, []
            self._slots -= len(idle)
        for p in idle:
            await p.kill()
