"""`reward.lean.compute_score` of several outputs against one ground truth in one event loop, its backends closed
after (tests of the reward's options: strict re-check, Lean version)."""
from __future__ import annotations

import asyncio

import reward.lean.score as rl
from lean_env.backends import factory


def score_all(ground_truth: str, outputs: list[str], **kw) -> list[dict]:
    async def main():
        try:
            return [await rl.compute_score("lean", o, ground_truth, {}, **kw) for o in outputs]
        finally:
            await factory.aclose_backends()
    return asyncio.run(main())
