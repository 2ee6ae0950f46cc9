r"""Few-shot prompts for MATH.

Exemplars: the four problems of Lewkowycz et al. 2022 (Minerva, appendix D.2), the prompt used by
lm-evaluation-harness `minerva_math`, with the answer written as `\boxed{...}` inside the solution
(which is what the grader extracts) instead of Minerva's "Final Answer: The final answer is X." line.

- Chat models (tokenizer has a chat template): a system line, then each exemplar as a user turn
  (problem) and an assistant turn (solution), then the test problem as the last user turn.
- Otherwise: raw text "Problem:\n...\n\nSolution:\n..." blocks; generation stops at "\n\nProblem:".
"""
from __future__ import annotations

INSTRUCTION = "Solve the following math problem. Put the final answer in \\boxed{}."
RAW_STOP = ("\n\nProblem:",)

MINERVA_EXEMPLARS: tuple[tuple[str, str], ...] = (
    (
        "Find the domain of the expression  $\\frac{\\sqrt{x-2}}{\\sqrt{5-x}}$.",
        "The expressions inside each square root must be non-negative. Therefore, $x-2 \\ge 0$, so $x\\ge2$, "
        "and $5 - x \\ge 0$, so $x \\le 5$. Also, the denominator cannot be equal to zero, so $5-x>0$, which "
        "gives $x<5$. Therefore, the domain of the expression is $\\boxed{[2,5)}$.",
    ),
    (
        "If $\\det \\mathbf{A} = 2$ and $\\det \\mathbf{B} = 12,$ then find $\\det (\\mathbf{A} \\mathbf{B}).$",
        "We have that $\\det (\\mathbf{A} \\mathbf{B}) = (\\det \\mathbf{A})(\\det \\mathbf{B}) "
        "= (2)(12) = \\boxed{24}.$",
    ),
    (
        "Terrell usually lifts two 20-pound weights 12 times. If he uses two 15-pound weights instead, how many "
        "times must Terrell lift them in order to lift the same total weight?",
        "If Terrell lifts two 20-pound weights 12 times, he lifts a total of $2\\cdot 12\\cdot20=480$ pounds of "
        "weight. If he lifts two 15-pound weights instead for $n$ times, he will lift a total of $2\\cdot15\\cdot "
        "n=30n$ pounds of weight. Equating this to 480 pounds, we can solve for $n$: \\begin{align*}\n30n&=480\\\\\n"
        "\\Rightarrow\\qquad n&=480/30=\\boxed{16}\n\\end{align*}",
    ),
    (
        "If the system of equations\n\n\\begin{align*}\n6x-4y&=a,\\\\\n6y-9x &=b.\n\\end{align*}has a solution "
        "$(x, y)$ where $x$ and $y$ are both nonzero, find $\\frac{a}{b},$ assuming $b$ is nonzero.",
        "If we multiply the first equation by $-\\frac{3}{2}$, we obtain\n\n$$6y-9x=-\\frac{3}{2}a.$$Since we also "
        "know that $6y-9x=b$, we have\n\n$$-\\frac{3}{2}a=b\\Rightarrow\\frac{a}{b}=\\boxed{-\\frac{2}{3}}.$$",
    ),
)


def math_prompt(problem: str, chat: bool, num_shots: int = 4) -> str | list[dict[str, str]]:
    """The few-shot prompt for one MATH problem: chat messages when `chat`, else raw text."""
    if not 0 <= num_shots <= len(MINERVA_EXEMPLARS):
        raise ValueError(f"num_shots must be in 0..{len(MINERVA_EXEMPLARS)}, got {num_shots}")
    shots = MINERVA_EXEMPLARS[:num_shots]
    if chat:
        messages = [{"role": "system", "content": INSTRUCTION}]
        for question, solution in shots:
            messages += [{"role": "user", "content": question}, {"role": "assistant", "content": solution}]
        return messages + [{"role": "user", "content": problem}]
    blocks = [f"Problem:\n{q}\n\nSolution:\n{s}" for q, s in shots]
    return INSTRUCTION + "\n\n" + "\n\n".join(blocks + [f"Problem:\n{problem}\n\nSolution:\n"])
