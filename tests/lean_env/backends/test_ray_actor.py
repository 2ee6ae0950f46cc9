"""The optional Ray wrapper (skipped where ray is not importable)."""
import asyncio
import sys

import pytest

ray = pytest.importorskip("ray")

from lean_env import Outcome, Snippet  # noqa: E402
from lean_env.backends.ray_actor import RayReplBackend  # noqa: E402


def test_ray_actor_pool_checks_and_survives_a_crash():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        async def main():
            b = RayReplBackend(num_actors=1, actor_options={"num_cpus": 1, "scheduling_strategy": "DEFAULT"},
                               command=[sys.executable, "-m", "lean_env.testing.fake_repl", "--rules",
                                        '[{"match": "CRASH", "outcome": "crash"}]'])
            snips = [Snippet(str(i), "import Mathlib\n", f"theorem t{i} : True := by\n  {t}\n#print axioms t{i}\n")
                     for i, t in enumerate(["trivial", "CRASH", "trivial"])]
            rs = await b.run(snips, timeout_s=30)
            healthy = await b.health()
            await b.aclose()
            return rs, healthy
        rs, healthy = asyncio.run(main())
    finally:
        ray.shutdown()
    assert [r.outcome for r in rs] == [Outcome.OK, Outcome.INFRA, Outcome.OK] and healthy
