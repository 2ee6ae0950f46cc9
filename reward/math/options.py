"""MATH grading options, each default written once: verl's `reward_kwargs` of `reward.math` and the `--grading-*`
flags of `python -m sdpo_eval.math_eval` (`sdpo_options.flags` with FLAG_PREFIX) are both built from the fields of
`MathGradingOptions`.

Contract: `MathGradingOptions.from_kwargs(kwargs)` accepts exactly the field names (an unknown key raises, naming
the known ones); every field is type-checked on construction, so a string "false" from a config never reads as true.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sdpo_options.flags import option

FLAG_PREFIX = "grading"
"""`python -m sdpo_eval.math_eval` names each option's flag `--grading-<field>`."""


@dataclass(frozen=True)
class MathGradingOptions:
    """How one MATH reply is graded (`reward.math.grader.grade`)."""

    timeout_s: float = option(5.0, "hard limit per answer comparison in seconds; a reply whose comparison runs past "
                                   "it scores 0 with verdict grader_timeout")
    prompt_opens_think: bool = option(False, "the prompt ends inside <think> (DeepSeek-R1's current template, "
                                             "Qwen3.5-4B's unless enable_thinking=false, Open-Reasoner-Zero): a "
                                             "reply without </think> was cut off while thinking and has no answer")
    rounded_irrationals: bool = option(False, "the source's own grading accepts a rounded decimal for an exact "
                                              "irrational answer (3.464 with an approximation sign for 2\\sqrt{3}; "
                                              "e.g. OlympiadBench problems that state their error); MATH's does not")

    def __post_init__(self) -> None:
        if isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float)) or self.timeout_s <= 0:
            raise ValueError(f"MATH grading option timeout_s must be a positive number, got {self.timeout_s!r}")
        for name in ("prompt_opens_think", "rounded_irrationals"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"MATH grading option {name} must be true or false, got {getattr(self, name)!r}")

    def template_problem(self, generation_prompt: str, fix: str) -> str | None:
        """Why these options misgrade replies to `generation_prompt` (a chat template rendered with the generation
        prompt), or None: `prompt_opens_think` must equal `prompt_opens_think(generation_prompt)`."""
        opens = prompt_opens_think(generation_prompt)
        if opens == self.prompt_opens_think:
            return None
        tail = generation_prompt[-40:].encode("unicode_escape").decode()
        said = "ends inside <think>" if opens else "does not end inside <think>"
        return (f"the chat template's generation prompt {said} (...{tail}) but prompt_opens_think is "
                f"{str(self.prompt_opens_think).lower()}, so replies would be graded as if it did"
                f"{'' if self.prompt_opens_think else ' not'} ({fix}={str(opens).lower()})")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> MathGradingOptions:
        """Options from verl's `reward_kwargs`; unknown keys raise with the known ones listed."""
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = set(kwargs) - set(known)
        if unknown:
            raise ValueError(f"unknown MATH reward option(s) {sorted(unknown)}; known: {known}")
        return cls(**kwargs)


def prompt_opens_think(generation_prompt: str) -> bool:
    """Whether a rendered prompt ends inside a think block: its last `<think>` comes after its last `</think>`."""
    return generation_prompt.rfind("<think>") > generation_prompt.rfind("</think>")
