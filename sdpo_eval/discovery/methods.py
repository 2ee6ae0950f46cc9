"""The discovery methods: one table of names, each with its protocol and how it runs.

Protocols (the `protocol` the report records per method):
- `single`: a verl run over the problem set with `sdpo.ttrl.protocol=single`: one problem at a time, each from the
  initial state, as a fresh single-problem run would train it (the seed's and the SDPO authors' discovery@k).
- `shared`: a verl run with `sdpo.ttrl.protocol=shared` (set-TTRL): every problem in one model, so what is learned on
  one problem helps the others. Named `<method>_shared`.
- `sampler`: no training; `sdpo_eval.discovery.sampler` draws with the recipe's own prompts, sampling settings and
  reward (one vLLM engine, no verl). `best_of_k` is the only best-of-k of the figures.

A verl method is (recipe algorithm part, its overrides): the run is `+recipe=<algorithm>_<task>` with them.
"""
from __future__ import annotations

from dataclasses import dataclass

PROTOCOLS = ("single", "shared", "sampler")
SHARED_SUFFIX = "_shared"
# verl gates the actor update on `critic_warmup <= global_steps`: a warm-up no run reaches turns learning off
NO_UPDATE = ("trainer.critic_warmup=1000000000",)


@dataclass(frozen=True)
class Method:
    """One discovery method: its protocol, and for a verl run the recipe algorithm part and its overrides."""

    name: str
    protocol: str  # single | shared | sampler
    algorithm: str = ""  # the recipe's algorithm part (verl runs); "" for the sampler
    overrides: tuple[str, ...] = ()
    about: str = ""

    @property
    def trained(self) -> bool:
        """Whether the method runs verl (protocol single or shared), not the sampler."""
        return self.protocol != "sampler"


# name -> (algorithm, overrides, what it is). sdpo_confident: the SDPO setting that learns on the 135M demo
# (bench/learning/results/learning.json); sdpo: the SDPO authors' defaults.
_VERL = {
    "grpo": ("grpo", (), "GRPO"),
    "sdpo": ("sdpo", (), "SDPO with the authors' defaults"),
    "sdpo_confident": ("sdpo", ("actor_rollout_ref.actor.sdpo.token_weighting=confident",),
                       "SDPO distilling the confident tokens only"),
    "srpo": ("srpo", (), "SRPO"),
    "sc_sdpo": ("sc_sdpo", (), "self-consistency SDPO"),
    "verl_no_update": ("grpo", NO_UPDATE, "the GRPO run with the actor update off: verl's sampler, no learning"),
}
_SAMPLED = {
    "best_of_k": "every attempt from the plain prompt",
    "reprompt": "each slot's next attempt from SDPO's teacher context of its latest failed attempt",
}


def _table() -> dict[str, Method]:
    table = {name: Method(name, "sampler", about=about) for name, about in _SAMPLED.items()}
    for name, (algorithm, overrides, about) in _VERL.items():
        table[name] = Method(name, "single", algorithm, overrides, about + ", one problem at a time")
        shared = name + SHARED_SUFFIX
        table[shared] = Method(shared, "shared", algorithm, overrides, about + ", every problem in one model")
    return table


METHODS: dict[str, Method] = _table()
BASELINES = ("best_of_k", "reprompt")  # the report pairs every method with each of these it ran beside
FIGURE_METHODS = ("best_of_k", "reprompt", "grpo", "sdpo", "sdpo_confident", "srpo", "sdpo_confident_shared",
                  "srpo_shared")


def method(name: str) -> Method:
    """The table's entry; ValueError naming the known methods."""
    if name not in METHODS:
        raise ValueError(f"error: unknown method {name!r} (known: {', '.join(METHODS)})")
    return METHODS[name]


def protocol(name: str) -> str | None:
    """The protocol of a method the table knows; None for a name it does not (an older log's)."""
    return METHODS[name].protocol if name in METHODS else None
