"""Chat prompts for Lean 4 provers, one per model family (`PROMPT_STYLES[name].build(...)`).

Every builder takes the dataset's exact statement, its trusted header and its informal docstring
(`/-- ... -/`, may be empty) and returns verl chat messages. The statement text is never altered;
only `sorry` is appended where the source template shows a `sorry` placeholder.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

Messages = list[dict[str, str]]


def informal_text(informal_prefix: str) -> str:
    """The natural-language problem inside a `/-- ... -/` docstring (the text itself if unwrapped)."""
    text = (informal_prefix or "").strip()
    if text.startswith("/--"):
        text = text[3:]
    elif text.startswith("/-"):
        text = text[2:]
    if text.endswith("-/"):
        text = text[:-2]
    return text.strip()


def _with_sorry(statement: str) -> str:
    """`statement` followed by a `sorry` proof (`:= by` kept; a bare `:=` gets ` by`)."""
    body = statement.rstrip()
    return body + ("\n  sorry" if body.endswith("by") else " by\n  sorry")


def _code(header: str, *parts: str) -> str:
    return header.rstrip() + "\n\n" + "".join(parts).rstrip()


KIMINA_SYSTEM = "You are an expert in mathematics and proving theorems in Lean 4."


def kimina(statement: str, header: str, informal_prefix: str) -> Messages:
    """Kimina-Prover's prompt: its system prompt and a user turn with the problem and the formal statement."""
    user = ("Think about and solve the following problem step by step in Lean 4."
            f"\n# Problem:{informal_text(informal_prefix)}"
            f"\n# Formal statement:\n```lean4\n{_code(header, statement)}\n```\n")
    return [{"role": "system", "content": KIMINA_SYSTEM}, {"role": "user", "content": user}]


GOEDEL_INSTRUCTION = (
    "Before producing the Lean 4 code to formally prove the given theorem, provide a detailed proof plan outlining "
    "the main proof steps and strategies.\nThe plan should highlight key ideas, intermediate lemmas, and proof "
    "structures that will guide the construction of the final formal proof."
)


def goedel(statement: str, header: str, informal_prefix: str) -> Messages:
    """Goedel-Prover's prompt: complete the Lean code (statement with `sorry`)."""
    prefix = informal_prefix.rstrip() + "\n" if informal_prefix and informal_prefix.strip() else ""
    code = _code(header, prefix, _with_sorry(statement))
    content = f"Complete the following Lean 4 code:\n\n```lean4\n{code}\n```\n\n{GOEDEL_INSTRUCTION}"
    return [{"role": "user", "content": content}]


QWEN_SYSTEM = "You are an expert in mathematics and Lean 4 theorem proving."


def qwen(statement: str, header: str, informal_prefix: str) -> Messages:
    """A general model's prompt: reason, then give the whole Lean solution in one ```lean4 block at the end."""
    user = (
        "Reason step-by-step to solve the following Lean 4 theorem without using `sorry`. At the very end of your "
        "response, write the complete Lean 4 solution (the header, the theorem statement exactly as given, and its "
        "proof) in exactly one ```lean4``` code block, and put no other ```lean4``` code block after it."
        f"\n\n# Problem:\n{informal_text(informal_prefix)}"
        f"\n\n# Formal statement:\n```lean4\n{_code(header, statement)}\n```\n"
    )
    return [{"role": "system", "content": QWEN_SYSTEM}, {"role": "user", "content": user}]


FEWSHOT_EXAMPLES = (("theorem toy_add_2_2 : (2 : ℕ) + 2 = 4 := by", "norm_num"),
                    ("theorem toy_mul_3_4 : (3 : ℕ) * 4 = 12 := by", "norm_num"))


def fewshot(statement: str, header: str, informal_prefix: str) -> Messages:
    """Two worked examples, then the statement: for small models that do not know the answer format."""
    shots = "".join(f"Theorem:\n```lean4\n{st}\n```\nAnswer:\n```lean4\n{st}\n  {tactic}\n```\n\n"
                    for st, tactic in FEWSHOT_EXAMPLES)
    user = ("Prove the theorem in Lean 4. Reply with one ```lean4 code block: the theorem exactly as given, then its "
            f"proof.\n\n{shots}Theorem:\n```lean4\n{statement.rstrip()}\n```\nAnswer:")
    return [{"role": "user", "content": user}]


@dataclass(frozen=True)
class PromptStyle:
    """A prompt style: its name, where it comes from, and its builder (statement, header, informal prefix ->
    messages)."""

    name: str
    source: str
    build: Callable[[str, str, str], Messages]


PROMPT_STYLES: dict[str, PromptStyle] = {
    "kimina": PromptStyle(
        "kimina",
        "AI-MO/Kimina-Prover-RL-1.7B and Kimina-Prover-Preview-Distill model cards (HF): system line, "
        "'# Problem:' + '# Formal statement:' with header + statement ending `:= by`, no sorry.",
        kimina,
    ),
    "goedel": PromptStyle(
        "goedel",
        "deepseek-ai/DeepSeek-Prover-V2-7B model card (HF), also Goedel-Prover-V2 (Goedel-LM/Goedel-Prover-V2 "
        "repo): single user turn, header + docstring + statement + `sorry`, then the proof-plan instruction.",
        goedel,
    ),
    "qwen": PromptStyle(
        "qwen",
        "origin project qwen_sdpo/ (AlexH2006/cs224n_project) student prompt for Qwen3.5, instruction written out "
        "here in full (the origin text is abridged in our notes).",
        qwen,
    ),
    "fewshot": PromptStyle(
        "fewshot",
        "sdpo-lean's own, for the toy set (sdpo_data.toy_lean) and small models such as SmolLM2-135M that never "
        "write a ```lean4 block from the other prompts (0 of 64 samples, measured): two worked ℕ examples.",
        fewshot,
    ),
}


def build_prompt(style: str, statement: str, header: str, informal_prefix: str = "") -> Messages:
    """Messages for `style`; unknown styles raise with the list of known ones."""
    if style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {style!r}; known: {sorted(PROMPT_STYLES)}")
    return PROMPT_STYLES[style].build(statement, header, informal_prefix)
