"""The backend for a `BackendOptions`: `make_backend` builds one (kimina, repl or repl-ray, each imported lazily);
`get_backend` keeps one per (event loop, options), created on first use and shared by all concurrent calls in that
loop; `aclose_backends` closes those of the running loop (processes, HTTP clients)."""
from __future__ import annotations

import asyncio

from lean_env.options import BackendOptions
from lean_env.types import LeanBackend

_backends: dict[tuple[int, BackendOptions], tuple[asyncio.AbstractEventLoop, LeanBackend]] = {}


def make_backend(cfg: BackendOptions) -> LeanBackend:
    """A new backend for `cfg` (not cached: the caller closes it)."""
    if cfg.backend == "kimina":
        from lean_env.backends.kimina import KiminaBackend

        return KiminaBackend(cfg.url, cfg.api_key, endpoint=cfg.endpoint, batch_size=int(cfg.batch_size),
                             server_repls=int(cfg.server_repls), import_timeout_s=float(cfg.import_timeout_s))
    pool_kwargs = dict(command=cfg.repl_command, cwd=cfg.workspace, num_repls=int(cfg.num_repls),
                       max_uses=int(cfg.max_uses), max_rss_mb=cfg.max_rss_mb, mem_limit_mb=cfg.mem_limit_mb,
                       import_timeout_s=float(cfg.import_timeout_s))
    if cfg.backend == "repl-ray":
        from lean_env.backends.ray_actor import RayReplBackend

        return RayReplBackend(num_actors=int(cfg.ray_actors), **pool_kwargs)
    from lean_env.backends.repl import ReplPool

    return ReplPool(**pool_kwargs)


def get_backend(cfg: BackendOptions) -> LeanBackend:
    """The backend for `cfg` in the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    key = (id(loop), cfg)
    hit = _backends.get(key)
    if hit is None or hit[0] is not loop:
        _backends[key] = (loop, make_backend(cfg))
    return _backends[key][1]


async def aclose_backends() -> None:
    """Close the backends created in the running loop (processes, HTTP clients)."""
    loop = asyncio.get_running_loop()
    for key, (owner, backend) in list(_backends.items()):
        if owner is loop:
            del _backends[key]
            await backend.aclose()
