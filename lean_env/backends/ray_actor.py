"""Optional Ray wrapper: REPL pools as Ray actors, so checking scales across nodes.

`RayReplBackend(num_actors, actor_options, **pool_kwargs)` starts `num_actors` actors, each
holding a `ReplPool(**pool_kwargs)`, spread over the cluster (SPREAD scheduling unless
`actor_options` says otherwise); snippets go round-robin. Ray is imported only here, lazily.
A dead actor yields INFRA results, never an exception.
"""
from __future__ import annotations

import itertools
from typing import Any, Sequence

from lean_env.types import Outcome, RunResult, Snippet


class _PoolActor:
    def __init__(self, **pool_kwargs: Any):
        from lean_env.backends.repl import ReplPool

        self.pool = ReplPool(**pool_kwargs)

    async def run(self, snippets: Sequence[Snippet], timeout_s: float) -> list[RunResult]:
        return await self.pool.run(snippets, timeout_s=timeout_s)

    async def health(self) -> bool:
        return await self.pool.health()

    async def aclose(self) -> None:
        await self.pool.aclose()


class RayReplBackend:
    """`LeanBackend` over `num_actors` Ray actors, each holding a `ReplPool(**pool_kwargs)`; snippets go round-robin."""

    name = "repl-ray"

    def __init__(self, num_actors: int = 1, actor_options: dict | None = None, **pool_kwargs: Any):
        import ray

        if not ray.is_initialized():
            ray.init(ignore_reinit_error=True)
        opts = {"num_cpus": pool_kwargs.get("num_repls", 1), "scheduling_strategy": "SPREAD",
                "max_concurrency": 1000, **(actor_options or {})}
        cls = ray.remote(_PoolActor)
        self.actors = [cls.options(**opts).remote(**pool_kwargs) for _ in range(max(1, num_actors))]
        self._next = itertools.cycle(range(len(self.actors)))

    async def run(self, snippets: Sequence[Snippet], *, timeout_s: float) -> list[RunResult]:
        """`LeanBackend.run`: each snippet on the next actor; a dead or failing actor gives INFRA, never an
        exception."""
        import asyncio

        async def one(s: Snippet) -> RunResult:
            try:
                return (await self.actors[next(self._next)].run.remote([s], timeout_s))[0]
            except Exception as e:  # RayActorError, RayTaskError, ...
                return RunResult(s.id, Outcome.INFRA, 0.0,
                                 infra_detail=f"Ray actor failed: {type(e).__name__}: {e}"[:400])

        return list(await asyncio.gather(*(one(s) for s in snippets)))

    async def health(self) -> bool:
        """Whether every actor's pool answers its health check."""
        import asyncio

        try:
            return all(await asyncio.gather(*(a.health.remote() for a in self.actors)))
        except Exception:
            return False

    async def aclose(self) -> None:
        """Close every actor's pool and kill the actors."""
        import ray

        for a in self.actors:
            try:
                await a.aclose.remote()
            except Exception:
                pass
            ray.kill(a)
