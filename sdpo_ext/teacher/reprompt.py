"""Teacher contexts for SDPO: the student's own messages, with the last user turn extended by a
successful sibling's answer and/or the environment's feedback (lasgroup/SDPO behaviour).

Invariant: the system prompt, every earlier turn and the original user text stay byte-identical;
only text AFTER the original prompt is added (with the default template). Infrastructure
failures are never a demonstration, never feedback, and never get a teacher signal.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sdpo_options.flags import option

METRIC_PREFIX = "self_distillation/"
_THINK_BLOCK = re.compile(r"<think>.*?</think>\s*", flags=re.DOTALL)
_UNOPENED_THINK = re.compile(r"^.*?</think>\s*", flags=re.DOTALL)


def _fields(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


@dataclass(frozen=True)
class RepromptConfig:
    """Teacher-context settings (`actor_rollout_ref.actor.sdpo.reprompt`); defaults are the authors' (actor.yaml of
    lasgroup/SDPO). `success_reward_threshold` is 0.5 as in the authors' code and yaml; their README says 1.0."""

    success_reward_threshold: float = option(0.5, "a sample whose score reaches it is a success (a demonstration)")
    dont_reprompt_on_self_success: bool = option(True, "a sample is never shown its own answer as the demonstration")
    include_environment_feedback: bool = option(True, "show the environment's feedback on the sample's own attempt")
    environment_feedback_only_without_solution: bool = option(True, "show the feedback only when no sibling's "
                                                                     "solution is shown")
    remove_thinking_from_demonstration: bool = option(True, "drop the <think> blocks of a demonstration")
    max_reprompt_len: int = option(10240, "tokens of the teacher PROMPT (chat template + generation prompt)")
    reprompt_template: str = option("{prompt}{solution}{feedback}\n\nCorrectly solve the original question.",
                                    "the last user turn of the teacher: {prompt}, {solution} and {feedback} once each")
    solution_template: str = option("\nCorrect solution:\n\n{successful_previous_attempt}",
                                    "the {solution} part: {successful_previous_attempt} once")
    feedback_template: str = option("\nThe following is feedback from your unsuccessful earlier attempt:\n\n"
                                    "{feedback_raw}", "the {feedback} part: {feedback_raw} once")
    truncation_marker: str = option("\n[...]\n", "stands where the middle of a shortened text was cut")

    def __post_init__(self) -> None:
        expected = {
            "reprompt_template": ["prompt", "solution", "feedback"],
            "solution_template": ["successful_previous_attempt"],
            "feedback_template": ["feedback_raw"],
        }
        for name, wanted in expected.items():
            got = _fields(getattr(self, name))
            if sorted(got) != sorted(wanted):
                raise ValueError(f"{name} must use each of the placeholders {wanted} exactly once, got {got}")
        if self.max_reprompt_len < 1:
            raise ValueError(f"max_reprompt_len must be >= 1, got {self.max_reprompt_len}")


@dataclass(frozen=True)
class TeacherSignal:
    """What the teacher of one sample is shown. ``demonstration``/``feedback`` are the texts put in
    the prompt (None: not used). ``masked_reason`` is None for a sample with a teacher signal, else
    one of "infra", "no_signal", "too_long"."""

    demonstration: str | None = None
    feedback: str | None = None
    demonstration_index: int | None = None  # batch index of the sibling whose answer is shown
    feedback_available: bool = False  # the environment returned non-empty feedback
    success: bool = False  # this sample's own score passed the threshold
    infra: bool = False
    truncated: bool = False  # demonstration/feedback shortened to fit max_reprompt_len
    masked_reason: str | None = None

    @property
    def active(self) -> bool:
        """Whether the sample gets a teacher context (not masked)."""
        return self.masked_reason is None


@dataclass
class TeacherBatch:
    """Teacher prompt token ids per sample (None where masked), the mask, signals and metrics."""

    prompt_ids: list[list[int] | None]
    mask: list[bool]
    signals: list[TeacherSignal]
    metrics: dict[str, float] = field(default_factory=dict)


def remove_thinking(text: str) -> str:
    """Drop every <think>…</think> block (and the whitespace after it), as the authors do; also drop
    a leading reasoning part closed by </think> whose <think> was in the generation prompt
    (departure: the authors keep that text)."""
    text = _THINK_BLOCK.sub("", text)
    if "</think>" in text and "<think>" not in text.split("</think>", 1)[0]:
        text = _UNOPENED_THINK.sub("", text, count=1)
    return text


def _has_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def select_teacher_signals(
    uids: Sequence[Any],
    scores: Sequence[float],
    responses: Sequence[str],
    feedbacks: Sequence[str | None],
    infra: Sequence[bool],
    cfg: RepromptConfig,
) -> list[TeacherSignal]:
    """Per sample: demonstration = the FIRST successful (score ≥ threshold, not infra) sibling in
    the same uid group, itself excluded when ``dont_reprompt_on_self_success``, <think> removed when
    configured; feedback used if non-empty, included, and (not only-without-solution or no
    demonstration). Infra samples are masked and never give a demonstration; a sample with neither
    signal is masked. ``responses`` are the decoded response texts (special tokens skipped)."""
    n = len(uids)
    for name, seq in (("scores", scores), ("responses", responses), ("feedbacks", feedbacks), ("infra", infra)):
        if len(seq) != n:
            raise ValueError(f"{name} has {len(seq)} entries, uids {n}")
    is_infra = [bool(x) for x in infra]
    success = [not is_infra[i] and float(scores[i]) >= cfg.success_reward_threshold for i in range(n)]
    successes_by_uid: dict[Any, list[int]] = {}
    for i in range(n):
        if success[i]:
            successes_by_uid.setdefault(uids[i], []).append(i)

    signals = []
    for i in range(n):
        if is_infra[i]:
            signals.append(TeacherSignal(infra=True, masked_reason="infra"))
            continue
        candidates = successes_by_uid.get(uids[i], [])
        if cfg.dont_reprompt_on_self_success:
            candidates = [j for j in candidates if j != i]
        demo_index = candidates[0] if candidates else None
        demonstration = None
        if demo_index is not None:
            demonstration = responses[demo_index]
            if cfg.remove_thinking_from_demonstration:
                demonstration = remove_thinking(demonstration)
        available = _has_text(feedbacks[i])
        use_feedback = (
            available
            and cfg.include_environment_feedback
            and (not cfg.environment_feedback_only_without_solution or demonstration is None)
        )
        feedback = feedbacks[i] if use_feedback else None
        signals.append(
            TeacherSignal(
                demonstration=demonstration,
                feedback=feedback,
                demonstration_index=demo_index,
                feedback_available=available,
                success=success[i],
                masked_reason=None if (demonstration is not None or feedback is not None) else "no_signal",
            )
        )
    return signals


def reprompt_text(prompt: str, signal: TeacherSignal, cfg: RepromptConfig) -> str:
    """The teacher's last user turn: the reprompt template around the unchanged original prompt."""
    solution = ("" if signal.demonstration is None
                else cfg.solution_template.format(successful_previous_attempt=signal.demonstration))
    feedback = "" if signal.feedback is None else cfg.feedback_template.format(feedback_raw=signal.feedback)
    return cfg.reprompt_template.format(prompt=prompt, solution=solution, feedback=feedback)


def _last_user_index(messages: Sequence[Mapping[str, Any]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            if not isinstance(messages[i].get("content"), str):
                raise ValueError(
                    "the last user message must have string content (multi-modal content is not supported)"
                )
            return i
    raise ValueError("student messages contain no user message")


def build_teacher_messages(
    student_messages: Sequence[Mapping[str, Any]], signal: TeacherSignal, cfg: RepromptConfig | None = None
) -> list[dict] | None:
    """A copy of the student's messages with only the LAST user message's content replaced by the
    reprompt template applied to it (system prompt and all other turns verbatim); None if masked."""
    if not signal.active:
        return None
    cfg = cfg or RepromptConfig()
    messages = [dict(m) for m in student_messages]
    last = _last_user_index(messages)
    messages[last]["content"] = reprompt_text(messages[last]["content"], signal, cfg)
    return messages


def _as_token_ids(rendered: Any) -> list[int]:
    """apply_chat_template(tokenize=True) output as a flat list: transformers 5.x returns a
    BatchEncoding/dict, 4.x a list (or a nested list / tensor)."""
    if isinstance(rendered, Mapping) or hasattr(rendered, "keys"):
        rendered = rendered["input_ids"]
    if hasattr(rendered, "tolist"):
        rendered = rendered.tolist()
    if rendered and isinstance(rendered[0], list):
        if len(rendered) != 1:
            raise ValueError(f"expected one tokenized conversation, got {len(rendered)}")
        rendered = rendered[0]
    return [int(x) for x in rendered]


def render_prompt_ids(
    tokenizer: Any, messages: Sequence[Mapping[str, Any]], chat_template_kwargs: Mapping[str, Any] | None = None
) -> list[int]:
    """Token ids of ``messages`` through the chat template with the generation prompt."""
    rendered = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True,
                                             **dict(chat_template_kwargs or {}))
    return _as_token_ids(rendered)


def shorten_middle(text: str, keep_chars: int, marker: str) -> str:
    """``text`` if it has ≤ keep_chars characters, else its first ⌈keep/2⌉ and last ⌊keep/2⌋
    characters joined by ``marker``."""
    if len(text) <= keep_chars:
        return text
    head = (keep_chars + 1) // 2
    tail = keep_chars - head
    return text[:head] + marker + (text[len(text) - tail:] if tail else "")


@dataclass(frozen=True)
class FittedPrompt:
    """A teacher prompt that fits the budget (``ids`` None when masked) and the signal it shows."""

    ids: list[int] | None
    signal: TeacherSignal


def fit_teacher_prompt(
    tokenizer: Any,
    student_messages: Sequence[Mapping[str, Any]],
    signal: TeacherSignal,
    cfg: RepromptConfig,
    chat_template_kwargs: Mapping[str, Any] | None = None,
) -> FittedPrompt:
    """Tokenise the teacher prompt within ``cfg.max_reprompt_len`` tokens.

    Rule when too long: only the demonstration and feedback texts are shortened, never the original
    messages, the template's instruction or the generation prompt. A binary search finds the largest
    c such that cutting each of those texts to c characters (``shorten_middle``: head and tail kept,
    middle replaced by the marker) fits; only lengths actually tokenised and found to fit are
    accepted. If it does not fit even with c = 0, the sample is masked with reason "too_long".
    """
    if not signal.active:
        return FittedPrompt(None, signal)

    def ids_for(sig: TeacherSignal) -> list[int]:
        return render_prompt_ids(tokenizer, build_teacher_messages(student_messages, sig, cfg), chat_template_kwargs)

    ids = ids_for(signal)
    if len(ids) <= cfg.max_reprompt_len:
        return FittedPrompt(ids, signal)

    def cut(c: int) -> TeacherSignal:
        return replace(
            signal,
            demonstration=(None if signal.demonstration is None
                           else shorten_middle(signal.demonstration, c, cfg.truncation_marker)),
            feedback=None if signal.feedback is None else shorten_middle(signal.feedback, c, cfg.truncation_marker),
            truncated=True,
        )

    best = cut(0)
    best_ids = ids_for(best)
    if len(best_ids) > cfg.max_reprompt_len:
        return FittedPrompt(None, replace(signal, masked_reason="too_long"))
    lo, hi = 0, max(len(signal.demonstration or ""), len(signal.feedback or "")) - 1  # invariant: lo fits
    while lo < hi:
        mid = (lo + hi + 1) // 2
        candidate = cut(mid)
        candidate_ids = ids_for(candidate)
        if len(candidate_ids) <= cfg.max_reprompt_len:
            lo, best, best_ids = mid, candidate, candidate_ids
        else:
            hi = mid - 1
    return FittedPrompt(best_ids, best)


def _fraction(count: int, total: int) -> float:
    return count / total if total else 0.0


def build_teacher_batch(
    tokenizer: Any,
    student_messages: Sequence[Sequence[Mapping[str, Any]]],
    uids: Sequence[Any],
    scores: Sequence[float],
    responses: Sequence[str],
    feedbacks: Sequence[str | None],
    infra: Sequence[bool],
    cfg: RepromptConfig,
    chat_template_kwargs: Mapping[str, Any] | None = None,
) -> TeacherBatch:
    """Select signals, tokenise every teacher prompt, and report the batch metrics (fractions of
    the batch unless stated): success_group_fraction (uid groups with a non-infra success),
    success_sample_fraction (own score ≥ threshold), feedback_available_fraction,
    feedback_used_fraction, demonstration_used_fraction, reprompt_sample_fraction (has a teacher
    signal), truncated_fraction (shortened to fit), too_long_fraction (masked: could not fit). The used/reprompt
    fractions are after fitting. The infra share is the trainer's `sdpo_lean/infra_fraction` (one name per quantity)."""
    if len(student_messages) != len(uids):
        raise ValueError(f"student_messages has {len(student_messages)} entries, uids {len(uids)}")
    signals = select_teacher_signals(uids, scores, responses, feedbacks, infra, cfg)
    fitted = [fit_teacher_prompt(tokenizer, msgs, sig, cfg, chat_template_kwargs)
              for msgs, sig in zip(student_messages, signals)]
    signals = [f.signal for f in fitted]
    n = len(signals)
    groups: dict[Any, bool] = {}
    for uid, sig in zip(uids, signals):
        groups[uid] = groups.get(uid, False) or sig.success
    metrics = {
        "success_group_fraction": _fraction(sum(groups.values()), len(groups)),
        "success_sample_fraction": _fraction(sum(s.success for s in signals), n),
        "feedback_available_fraction": _fraction(sum(s.feedback_available for s in signals), n),
        "feedback_used_fraction": _fraction(sum(s.active and s.feedback is not None for s in signals), n),
        "demonstration_used_fraction": _fraction(sum(s.active and s.demonstration is not None for s in signals), n),
        "reprompt_sample_fraction": _fraction(sum(s.active for s in signals), n),
        "truncated_fraction": _fraction(sum(s.active and s.truncated for s in signals), n),
        "too_long_fraction": _fraction(sum(s.masked_reason == "too_long" for s in signals), n),
    }
    return TeacherBatch(
        prompt_ids=[f.ids for f in fitted],
        mask=[s.active for s in signals],
        signals=signals,
        metrics={METRIC_PREFIX + k: float(v) for k, v in metrics.items()},
    )
