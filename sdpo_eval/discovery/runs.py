"""One run of a discovery job as a process: its folder, its start, its end and whether it may resume.

A run folder holds stdout.log, launch.json ({launched_at, config}: what the start-up table reads) and, once the
process ended, status.json ({command, returncode, wall_s}); a run whose status says returncode 0 is finished and is
skipped when the job starts again. Runs side by side on one host get a private /tmp each (`isolated`).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# verl 0.9.1 names its trainer-to-vLLM weight-sync socket /tmp/rl-colocate-zmq-<ray job id>-..., and every run's
# first Ray job id is 01000000: runs side by side on one host share that path and hang or fail in vLLM's
# collective_rpc. Each run therefore gets a private /tmp (a mount namespace), linked to what the host's /tmp holds.
_ISOLATE = ["unshare", "-m", "--propagation", "private", "sh", "-c",
            'mkdir -p /mnt/host_tmp && mount --bind /tmp /mnt/host_tmp && mount --bind "$0" /tmp && exec "$@"']
_NOT_LINKED = ("rl-colocate-",)  # the sockets the private /tmp exists to keep apart


def finished(run_dir: Path) -> bool:
    """Whether the run in `run_dir` ended with returncode 0 (its status.json)."""
    status = run_dir / "status.json"
    return status.exists() and json.loads(status.read_text()).get("returncode") == 0


def set_aside_unresumable_log(run_dir: Path) -> bool:
    """Before a relaunch: True when verl resumes the run from its checkpoint (trainer.resume_mode=auto, the attempt
    log under the checkpoint's run id). Without one the run starts over under a new run id, so the first try's
    attempts.jsonl is renamed (attempts.jsonl.<n>, which the report does not read): left in place, it would count as
    one more run of the seed."""
    log = run_dir / "attempts.jsonl"
    if (run_dir / "checkpoints" / "latest_checkpointed_iteration.txt").exists():
        return True
    if log.exists():
        n = 1
        while log.with_name(f"attempts.jsonl.{n}").exists():
            n += 1
        log.rename(log.with_name(f"attempts.jsonl.{n}"))
    return False


def can_isolate() -> bool:
    """Whether this host lets a process take its own mount namespace (`unshare -m`)."""
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


def isolated(private_tmp: Path) -> list[str]:
    """The prefix that runs a command with `private_tmp` as its /tmp, in which every entry of the host's /tmp (but
    verl's sockets) is linked; torch's inductor cache is made first, so the runs share their compiled kernels."""
    private_tmp.mkdir(parents=True, exist_ok=True)
    (Path("/tmp") / f"torchinductor_{os.environ.get('USER', 'root')}").mkdir(exist_ok=True)
    for entry in Path("/tmp").iterdir():
        link = private_tmp / entry.name
        if not (entry.name.startswith(_NOT_LINKED) or link.exists() or link.is_symlink()):
            link.symlink_to(Path("/mnt/host_tmp") / entry.name)
    return [*_ISOLATE, str(private_tmp)]


@dataclass
class Run:
    """A started run: its process (own session, so a timeout ends all of it) and when it started."""

    name: str
    run_dir: Path
    command: list[str]
    process: subprocess.Popen
    started: float = field(default_factory=time.time)

    def poll(self, timeout_s: float | None = None) -> int | None:
        """The return code once ended (status.json written then); past `timeout_s` the run's session is killed."""
        rc = self.process.poll()
        if rc is None and timeout_s is not None and time.time() - self.started > timeout_s:
            os.killpg(self.process.pid, signal.SIGKILL)
            rc = self.process.wait()
        if rc is not None and not (self.run_dir / "status.json").exists():
            (self.run_dir / "status.json").write_text(json.dumps(
                {"command": self.command, "returncode": rc, "wall_s": round(time.time() - self.started, 1)},
                indent=2))
            if rc == 0:  # a finished run is never resumed: its checkpoints would only fill the disk
                shutil.rmtree(self.run_dir / "checkpoints", ignore_errors=True)
        return rc


def start(name: str, command: list[str], run_dir: Path, config: str, env: Mapping[str, str] | None = None,
          prefix: Sequence[str] = ()) -> Run:
    """Start `prefix + command` in its own session, stdout and stderr appended to run_dir/stdout.log; launch.json
    and command.txt written first, a former status.json removed (the run is not finished)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "status.json").unlink(missing_ok=True)
    (run_dir / "command.txt").write_text(" ".join(command) + "\n")
    (run_dir / "launch.json").write_text(json.dumps({"launched_at": time.time(), "config": config}))
    with open(run_dir / "stdout.log", "a") as out:
        process = subprocess.Popen([*prefix, *command], stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})}, start_new_session=True)
    return Run(name, run_dir, list(command), process)
