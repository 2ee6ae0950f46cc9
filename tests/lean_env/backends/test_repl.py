"""Fault injection on the local REPL pool, against the REPL double."""
import asyncio
import json

import psutil
import pytest

from lean_env import Outcome, Snippet
from lean_env.backends.repl import ReplPool

HEADER = "import Mathlib\n"
RULES = json.dumps([
    {"match": "HANG", "outcome": "hang"},
    {"match": "CRASH", "outcome": "crash"},
    {"match": "GARBAGE", "outcome": "garbage"},
    {"match": "FORGE", "outcome": "forge", "message": "unsolved goals"},
    {"match": "FLOOD", "outcome": "valid", "stderr_bytes": 3_000_000},
    {"match": "GROW", "outcome": "valid", "grow_mb": 40},
    {"match": "BAD", "outcome": "error", "message": "type mismatch", "line": 2, "col": 2},
])


def pool(fake_repl, *extra, **kw):
    return ReplPool([*fake_repl, "--rules", RULES, *extra], **kw)


def snip(i, tactic="norm_num", header=HEADER):
    return Snippet(str(i), header, f"theorem t{i} : True := by\n  {tactic}\n\n#print axioms t{i}\n")


def test_header_imported_once_and_reused(fake_repl):
    async def main():
        p = pool(fake_repl, "--import-delay", "0.3")
        rs = await p.run([snip(i) for i in range(12)], timeout_s=10)
        await p.aclose()
        return p, rs
    p, rs = asyncio.run(main())
    assert [r.id for r in rs] == [str(i) for i in range(12)]
    assert all(r.outcome is Outcome.OK and r.messages[-1].severity == "info" for r in rs)
    assert p.spawned == 1


def test_error_positions_are_relative_to_body(fake_repl):
    async def main():
        p = pool(fake_repl)
        (r,) = await p.run([snip(0, "BAD")], timeout_s=10)
        await p.aclose()
        return r
    r = asyncio.run(main())
    err = [m for m in r.messages if m.severity == "error"]
    assert err and (err[0].line, err[0].col, err[0].text) == (2, 2, "type mismatch")


def test_hang_times_out_and_kills_the_whole_process_group(fake_repl):
    async def main():
        p = pool(fake_repl, "--spawn-child")
        await p.run([snip(0)], timeout_s=10)
        proc = p._idle[0]
        tree = [proc.pid] + [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        assert len(tree) == 2   # parent + child, like `lake env`
        (r,) = await p.run([snip(1, "HANG")], timeout_s=0.5)
        (after,) = await p.run([snip(2)], timeout_s=10)
        await p.aclose()
        return r, after, tree, p
    r, after, tree, p = asyncio.run(main())
    assert r.outcome is Outcome.TIMEOUT
    assert not any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in tree)
    assert after.outcome is Outcome.OK and p.spawned == 2


@pytest.mark.parametrize("fault", ["CRASH", "GARBAGE"])
def test_crash_and_garbage_are_infra_and_the_pool_recovers(fake_repl, fault):
    async def main():
        p = pool(fake_repl)
        rs = await p.run([snip(0), snip(1, fault), snip(2)], timeout_s=10)
        (later,) = await p.run([snip(3)], timeout_s=10)
        await p.aclose()
        return rs, later
    rs, later = asyncio.run(main())
    assert rs[1].outcome is Outcome.INFRA and rs[1].infra_detail
    assert later.outcome is Outcome.OK


def test_a_forged_answer_printed_during_elaboration_is_infra_never_a_verdict(fake_repl):
    """The double prints a clean copy of the answer (right env id, real audit) before the real one, with an error."""
    async def main():
        p = pool(fake_repl)
        rs = await p.run([snip(0), snip(1, "FORGE")], timeout_s=10)
        (later,) = await p.run([snip(2)], timeout_s=10)
        await p.aclose()
        return rs, later, p
    (ok, forged), later, p = asyncio.run(main())
    assert ok.outcome is Outcome.OK and not any(m.severity == "error" for m in ok.messages)
    assert forged.outcome is Outcome.INFRA and "not this request" in forged.infra_detail
    assert later.outcome is Outcome.OK and p.spawned == 2


def test_an_answer_for_another_env_is_infra(fake_repl):
    async def main():
        p = pool(fake_repl)
        (first,) = await p.run([snip(0)], timeout_s=10)
        (proc,) = p._idle
        proc.next_env += 5   # as if an earlier answer had been skipped
        (second,) = await p.run([snip(1)], timeout_s=10)
        await p.aclose()
        return first, second
    first, second = asyncio.run(main())
    assert first.outcome is Outcome.OK
    assert second.outcome is Outcome.INFRA and "expected" in second.infra_detail


def test_stderr_flood_does_not_stall(fake_repl):
    async def main():
        p = pool(fake_repl)
        rs = await p.run([snip(0, "FLOOD"), snip(1, "FLOOD")], timeout_s=20)
        await p.aclose()
        return rs
    assert all(r.outcome is Outcome.OK for r in asyncio.run(main()))


def test_rss_growth_and_use_count_recycle_processes(fake_repl):
    async def main():
        p = pool(fake_repl, max_rss_mb=100)
        rs = [(await p.run([snip(i, "GROW")], timeout_s=20))[0] for i in range(6)]
        q = pool(fake_repl, max_uses=2)
        rs += [(await q.run([snip(i)], timeout_s=10))[0] for i in range(5)]
        await p.aclose()
        await q.aclose()
        return p, q, rs
    p, q, rs = asyncio.run(main())
    assert all(r.outcome is Outcome.OK for r in rs)
    assert p.recycled >= 2 and p.spawned >= 3
    assert q.spawned == 3 and q.recycled == 2


def test_memory_rlimit_turns_runaway_allocation_into_infra(fake_repl):
    async def main():
        p = ReplPool([*fake_repl, "--rules", json.dumps([{"match": "GROW", "grow_mb": 2000}])], mem_limit_mb=1000)
        rs = await p.run([snip(0, "GROW")], timeout_s=20)
        (later,) = await p.run([snip(1)], timeout_s=10)
        await p.aclose()
        return rs[0], later
    r, later = asyncio.run(main())
    assert r.outcome is Outcome.INFRA and "MemoryError" in r.infra_detail
    assert later.outcome is Outcome.OK


def test_slow_import_start_failure_and_bad_command_are_infra(fake_repl):
    async def main():
        slow = pool(fake_repl, "--import-delay", "5", import_timeout_s=0.3)
        missing = ReplPool(["/nonexistent/lake", "exe", "repl"])
        out = await slow.run([snip(0)], timeout_s=5) + await missing.run([snip(1)], timeout_s=5)
        await slow.aclose()
        return out
    for r in asyncio.run(main()):
        assert r.outcome is Outcome.INFRA and "start failed" in r.infra_detail


def test_two_headers_share_one_slot_by_eviction_and_nothing_is_lost(fake_repl):
    faults = ["norm_num", "HANG", "CRASH", "GARBAGE", "BAD", "FLOOD"]
    snippets = [snip(i, faults[i % len(faults)], header=HEADER if i % 3 else "import Mathlib\nimport Aesop\n")
                for i in range(24)]

    async def main():
        p = pool(fake_repl, num_repls=2)
        rs = await p.run(snippets, timeout_s=1.0)
        await p.aclose()
        return rs
    rs = asyncio.run(main())
    assert [r.id for r in rs] == [s.id for s in snippets]
    for s, r in zip(snippets, rs):
        want = {"HANG": Outcome.TIMEOUT, "CRASH": Outcome.INFRA,
                "GARBAGE": Outcome.INFRA}.get(s.body.split()[6], Outcome.OK)
        assert r.outcome is want, (s, r)


def test_health(fake_repl):
    async def main():
        p = pool(fake_repl)
        ok = await p.health()
        await p.aclose()
        return ok
    assert asyncio.run(main())


def test_cancelled_check_frees_its_slot(fake_repl):
    async def main():
        p = pool(fake_repl, num_repls=1)
        task = asyncio.ensure_future(p.run([snip(0, "HANG")], timeout_s=30))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        (r,) = await asyncio.wait_for(p.run([snip(1)], timeout_s=10), 20)
        await p.aclose()
        return r
    assert asyncio.run(main()).outcome is Outcome.OK
