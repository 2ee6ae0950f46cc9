r"""The MATH grading table: (reference answer, model reply, expected verdict), written for this project.

Sources (each case is our own wording of a situation those suites test; no file of theirs is copied):
- "hendrycks": the `is_equiv` tests of hendrycks/math (modeling/math_equivalence_test.py), as boxed replies;
- "math-verify": huggingface/Math-Verify's tests (test_all, test_boxed, test_numina_cases, test_open_thoughts,
  test_yujianll, test_strict), rewritten as a reference answer plus a short reply;
- "lm-eval": lm-eval `minerva_math` (the Minerva "Final Answer: The final answer is X. I hope it is correct." format
  and what `normalize_final_answer` removes: units, dollars, thousands separators, `=` prefixes);
- "realistic": replies in the styles of Qwen2.5/Qwen3 (think blocks, "**Final Answer**" + display box), Llama-3
  ("Therefore, the final answer is: $\boxed{..}$. I hope it is correct."), DeepSeek-R1, Gemma ("**Answer:**"),
  DAPO ("Answer: X" last line) and the issue's examples;
- "adversarial": replies that must not be graded correct (near misses, truncated prefixes, hedges, answers only
  inside an unfinished think block).
Left out as ambiguous: the order of an unordered list ("10, 4, -2" vs "4, 10, -2": hendrycks says unequal, a set
reading says equal), `\text{13}` vs 13, and a degree answer against a radian reference.
`expected` is whether a careful human grader marks the reply correct.
"""
from __future__ import annotations

from typing import NamedTuple


class Case(NamedTuple):
    source: str
    reference: str
    reply: str
    expected: bool
    note: str = ""


def _boxed(answer: str) -> str:
    return f"Putting it together, the answer is $\\boxed{{{answer}}}$."


HENDRYCKS = [
    Case("hendrycks", r"\frac{1}{2} + 2/3", _boxed(r"\tfrac{1}{2} + \frac1{72}"), False, "fractions differ"),
    Case("hendrycks", "4, 12, 2", _boxed("10, 4, 2"), False, "lists differ"),
    Case("hendrycks", r"\dfrac{1}{2} +\frac{1}{72}", _boxed(r"\tfrac{1}{2} +\! \frac1{72}"), True, "frac forms"),
    Case("hendrycks", "10", _boxed(r"10\text{ units}"), True, "units"),
    Case("hendrycks", "100", _boxed(r"10\text{ units}"), False, "units, wrong number"),
    Case("hendrycks", r"\$10", _boxed("10"), True, "dollar sign"),
    Case("hendrycks", "(x-2)(x+2)", _boxed(r"\left(x-2\right)\left(x+2\right)"), True, r"\left \right"),
    Case("hendrycks", ".1", _boxed("0.1"), True, "leading zero"),
    Case("hendrycks", "10", _boxed(r"10\%"), True, "percent"),
    Case("hendrycks", r"10\sqrt3 + \sqrt{4}", _boxed(r"10\sqrt{3} + \sqrt4"), True, "sqrt shorthand"),
    Case("hendrycks", r"\frac{3}{4}i", _boxed(r"\frac34i"), True, "frac shorthand"),
    Case("hendrycks", r"\frac{8}{3}", _boxed(r"\tfrac83"), True, "tfrac shorthand"),
    Case("hendrycks", "x + y - z + 2 = 0", _boxed("5x - 7y + 11z + 4 = 0"), False, "different planes"),
    Case("hendrycks", r"\frac{1}{2}", _boxed("1/2"), True, "slash fraction"),
]

MATH_VERIFY = [
    Case("math-verify", "7425000", "The total is 7,425,000.", True, "thousands separators, plain text"),
    Case("math-verify", "1000", "It comes to 1000.0.", True, "trailing .0"),
    Case("math-verify", "1000.99", "So the price is 1,000.99.", True, "separator and decimals"),
    Case("math-verify", "0.4", "The probability is .4.", True, "leading dot"),
    Case("math-verify", "2", "The code is AZYUK2A", False, "digit inside a word"),
    Case("math-verify", "10/9", r"We get $\boxed{\frac{10}{9}}$.", True),
    Case("math-verify", "-10/9", r"We get $\boxed{-\frac{10}{9}}$.", True),
    Case("math-verify", "[0,1)", r"The range is $\boxed{[0,1)}$.", True),
    Case("math-verify", "[0,9)", r"The range is $\boxed{[0,1)}$.", False),
    Case("math-verify", "(0,9)", r"The range is $\boxed{[0,9)}$.", False, "open vs half-open"),
    Case("math-verify", "9", r"Answer \[ 9 \]", True, "display math as the last formula"),
    Case("math-verify", "9", "Answer $ 9 $.", True, "inline math as the last formula"),
    Case("math-verify", "10", r"Answer \( (9+1) \).", True, "expression"),
    Case("math-verify", "1/3", r"So it is $\boxed{\frac13}$.", True),
    Case("math-verify", "1", r"So it is $\boxed{\frac3{3}}$.", True),
    Case("math-verify", r"\sqrt{3}", r"So it is $\boxed{\sqrt3}$.", True),
    Case("math-verify", "1/3", r"So it is $\boxed{\cfrac{1}{3}}$.", True),
    Case("math-verify", "1/3", r"So it is $\boxed{\left( \frac{1}{3} \right)}$.", True),
    Case("math-verify", "1/3", r"So it is $\boxed{\frac{1}{3} \text{meters}}$.", True, "unit text"),
    Case("math-verify", "1/3", r"So it is $\boxed{\frac{1}{3} \textbf{meters}}$.", True, "bold unit"),
    Case("math-verify", "1/3", r"Therefore $\boxed{k = \frac{1}{3}}$.", True, "assignment"),
    Case("math-verify", r"28\%", "The answer is 28 percent.", True),
    Case("math-verify", r"28\%", "The answer is 28 pct.", True),
    Case("math-verify", r"28\%", "The answer is $28$ %.", True),
    Case("math-verify", r"28\%", r"The answer is $\boxed{28}$ percent.", True),
    Case("math-verify", "2-2p", r"Since $x<2$, $|x-2|=2-x=p$, so $x=2-p$ and $x-p=\boxed{2-2p}$.", True),
    Case("math-verify", r"\begin{pmatrix} 0 & 3 \\ 0 & -1 \end{pmatrix}",
         "Multiplying out,\n\\[\\boxed{\n\\begin{pmatrix} 0 & 3 \\\\ 0 & -1 \\end{pmatrix}\n}.\\]", True, "matrix box"),
    Case("math-verify", r"14{,}916", r"The next candidate works, so $\boxed{14{,}916}$ is our answer.", True),
    Case("math-verify", r"\left( 3, \frac{\pi}{2} \right)",
         r"Hence the polar coordinates are $\boxed{\left( 3, \frac{\pi}{2} \right)}.$", True),
    Case("math-verify", r"\frac{14}{3}", r"$f(-2)+f(-1)+f(0)=2+\frac{5}{3}+1=\boxed{\frac{14}{3}}$", True),
    Case("math-verify", r"\text{Evelyn}", r"So $\boxed{\text{Evelyn}}$ is the fastest.", True, "text answer"),
    Case("math-verify", r"90^\circ", r"Hence the angle between the lines is $\boxed{90^\circ}.$", True),
    Case("math-verify", r"3\sqrt{13}", r"$\sqrt{117} = \boxed{3\sqrt{13}}$.", True),
    Case("math-verify", r"15\mbox{ cm}^2", r"The area is $$\frac12\cdot 3\cdot 10 = \boxed{15\mbox{ cm}^2}.$$", True),
    Case("math-verify", "-2,1", r"Checking the divisors of 14, the integer roots are $\boxed{-2,1}.$", True),
    Case("math-verify", "9", r"So $129^{34}+96^{38} \equiv \boxed{9} \pmod{11}.$", True, "text after the box"),
    Case("math-verify", "204_5", r"for a quotient of $\boxed{204_5}$.", True, "base subscript"),
    Case("math-verify", "(6,31,-1)", r"we find $(p,q,r) = \boxed{(6,31,-1)}.$", True),
    Case("math-verify", r"1 \pm \sqrt{19}", r"By the quadratic formula, $x = \boxed{1 \pm \sqrt{19}}.$", True),
    Case("math-verify", r"\{1\pm\sqrt{5},-2\}", r"so the answer is $\boxed{\{1\pm\sqrt{5},-2\}}.$", True),
    Case("math-verify", r"f(2) < f(1) < f(4)", r"Hence, $\boxed{f(2) < f(1) < f(4)}.$", True),
    Case("math-verify", r"2 \sin b \cos a", r"By sum-to-product, the expression is \[\boxed{2 \sin b \cos a}.\]", True),
    Case("math-verify", r"\frac{\pi r}{h+r}", r"The ratio is $\boxed{\frac{\pi r}{h+r}}$.", True),
    Case("math-verify", "125 miles", r"The distance is $\boxed{125\textnormal{ miles}}.$", True),
    Case("math-verify", r"[-1, -\frac{1}{2}) \cup (-\frac{1}{2}, 0) \cup (0, 1) \cup (1, \infty)",
         r"The solution set is $\boxed{[-1, -\tfrac12) \cup (-\tfrac12, 0) \cup (0, 1) \cup (1, \infty)}.$", True),
    Case("math-verify", r"\sqrt{2}+\sqrt{5}", r"The answer is $\boxed{\sqrt 2+\sqrt 5}$", True),
    Case("math-verify", r"\frac{9}{4}\pi", r"Therefore $\boxed{\frac94\pi}$.", True),
    Case("math-verify", r"\{-1\} \cup [0,7)", r"Thus $x \in \boxed{\{-1\} \cup [0,7)}.$", True),
    Case("math-verify", "x >= 5", r"Therefore $\boxed{x \geq 5}$ is the solution.", True),
    Case("math-verify", "x < 3", r"We find that $\boxed{x \lt 3}$.", True),
    Case("math-verify", r"x \leq 2", r"Thus $\boxed{x <= 2}$ is our answer.", True),
    Case("math-verify", "x > 5", r"Therefore $\boxed{x < 5}$ is the solution.", False),
    Case("math-verify", r"x \geq 5", r"The solution is $\boxed{x \leq 5}$.", False),
    Case("math-verify", r"x \leq 5", r"So $\boxed{5 \geq x}$.", True, "flipped inequality"),
    Case("math-verify", "x < 1", r"So $\boxed{-x > -1}$.", True, "negated inequality"),
    Case("math-verify", "x < 1", r"So $\boxed{x > -1}$.", False),
    Case("math-verify", "11", r"So $\boxed{x=11}$.", True),
    Case("math-verify", "11", r"So $\boxed{x\approx11}$.", True),
    Case("math-verify", "a +3z = 0", r"So $\boxed{0}$.", False, "an equation is not its right side"),
    Case("math-verify", "2x + z = 1", r"So $\boxed{1}$.", False),
    Case("math-verify", "k=1", r"So $\boxed{1}$.", True),
    Case("math-verify", "7 = 11a+c", r"So $\boxed{11a+c}$.", False),
    Case("math-verify", "2x+4y-3=0", r"The line is $\boxed{y=-\frac{1}{2}x+\frac{3}{4}}$.", True, "same line"),
    Case("math-verify", "x^2/4 + y^2/3 = 1", r"The ellipse is $\boxed{x^2/16 + y^2/12 = 1/4}$.", True),
    Case("math-verify", r"\begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix}",
         r"The identity matrix is $\boxed{\begin{pmatrix}1 & 0 \\ 0 & 1\end{pmatrix}}$.", True),
    Case("math-verify", r"\begin{bmatrix}0 & 0 \\0 & 0\end{bmatrix}",
         r"It is the zero matrix $\boxed{\begin{pmatrix}0 & 0 \\0 & 0\end{pmatrix}}$.", True, "bmatrix vs pmatrix"),
    Case("math-verify", r"\begin{pmatrix}1 & 2 \\3 & 4\end{pmatrix}",
         r"So $\boxed{\left[\begin{array}{cc}1 & 2 \\3 & 4\end{array}\right]}$.", True, "array matrix"),
    Case("math-verify", r"\begin{pmatrix}1 & 2 \\ 3 & 4\end{pmatrix}",
         r"The matrix is $\boxed{\begin{pmatrix}1 & 2 \\ 3 & 5\end{pmatrix}}$.", False, "one entry differs"),
    Case("math-verify", r"\frac{1}{12}", r"So $\boxed{0.0833333333333333}$.", True, "long decimal"),
    Case("math-verify", r"(1,\frac{9}{2})", r"So $\boxed{(1,4.5)}$.", True),
    Case("math-verify", r"\frac{x+2}{7}", r"So $\boxed{\frac{x}{7}+\frac{2}{7}}$.", True),
    Case("math-verify", r"\tan^2(y)+1", r"So $\boxed{\sec^2(y)}$.", True, "identity"),
    Case("math-verify", "34x+45y-20z+100=0", r"So $\boxed{-34x-45y+20z-100=0}$.", True, "scaled equation"),
    Case("math-verify", "(a+5)(b+2)", r"So $\boxed{(+5)(b+2)}$.", False),
    Case("math-verify", "2", r"So $\boxed{\frac{1+\sqrt{5}}{2}}$.", False),
    Case("math-verify", "4", r"So $\boxed{\frac{34}{16}+\frac{\sqrt{1358}}{16}}$.", False),
    Case("math-verify", r"1\sqrt{19}", r"So $\boxed{1}$.", False),
    Case("math-verify", "x+2n+1", r"So $\boxed{x+1}$.", False),
    Case("math-verify", "2/3", "So P(A) = (1/2) * (4/3) = 2/3. Therefore, the probability that Alice wins is 2/3. "
         "<|im_start|>user", True, "plain text answer, chat token after it"),
    Case("math-verify", "12", "Each divisor gives one sequence. Therefore, there are 12 distinct arithmetic sequences "
         "that meet the conditions. I hope it is correct. <|im_start|>user", True,
         "the only number of the closing sentence"),
    Case("math-verify", "(7,6)", "So, the ordered pair that solves the system is $(7, 6)$. <|im_start|>user", True),
    Case("math-verify", "[0,1)", r"Combining these conditions, the domain is the interval $(0, 1)$. "
         "Final Answer: The final answer is $(0, 1)$. I hope it is correct. <|im_start|>user", False),
    Case("math-verify", "[-3,2]", r"which is $\boxed{[-3, 2]}$. Final Answer: The final answer is $[-3, 2]$. I hope it "
         r"is correct. I apologize for the mistake. Let me correct it. The domain is $\boxed{(-\infty, -3] \cup [2, "
         r"\infty)}$. Final Answer: The final answer is $(-\infty, -3] \cup [2, \infty)$. I hope it is correct.", False,
         "the reply changed its answer"),
    Case("math-verify", "16386.20", r"Rounded to the nearest cent, it is worth $\boxed{\$16,\!386.20}$. The answer is "
         r"$16,\!386.20$.", True),
    Case("math-verify", r"\left(\frac{4}{5},\frac{1}{5}\right)", r"Thus, $(t,u) = \boxed{\left( \frac{4}{5}, \frac{1}{5} "
         r"\right)}.$ Final Answer: The final answer is $\left( \frac{4}{5}, \frac{1}{5} \right)$. I hope it is correct.",
         True),
    Case("math-verify", r"20\%", r"$$\frac{A/4}{5A/4}=\frac{1}{5}=\boxed{20 \%}.$$ Final Answer: The final answer is "
         r"$20 \%$. I hope it is correct.", True),
    Case("math-verify", "34", "Final Answer: The largest $n$ is 34.", True, "final-answer sentence"),
    Case("math-verify", r"\left( \frac{4}{3}, -\frac{1}{3} \right)",
         r"Thus, $(t,u) = \boxed{\left( \frac{4}{3}, -\frac{1}{3} \right)}.$", True),
    Case("math-verify", "(3,1)", r"So $\boxed{\{1,3\}}$.", False, "set vs ordered pair"),
    Case("math-verify", "14400", r"$1 \times 5! \times 5! = \boxed{14400}$. Final Answer: The final answer is 14400. "
         "I hope it is correct.", True),
    Case("math-verify", "7.78", r"$\frac{70}{9} \approx 7.78$. So Anna pays about $7.78. Final Answer: The final answer "
         "is 7.78.", True, "stray dollar sign"),
    Case("math-verify", "x-2y+z-1=0", r"$$-1(x-1)+2(y-1)+1(z-1)=0\Rightarrow\boxed{x-2y+z-1=0}.$$", True),
    Case("math-verify", "[-4,0]", r"Thus, the values of \( k \) are: \[ \boxed{[-4, 0]} \]", True),
    Case("math-verify", "(-6, 10)", r"So $A=-6$ and $B=10$. Final Answer: The final answer is \((-6, 10)\). I hope it "
         "is correct.", True),
    Case("math-verify", r"\text{C}", r"$\boxed{\text{(C)}}.$", True, "choice letter"),
    Case("math-verify", "11111111100", r"is $\boxed{11,\! 111,\! 111,\! 100}$", True),
    Case("math-verify", "32349", r"is $\boxed{32,\! 349}$", True),
    Case("math-verify", "32349", r"is $\boxed{32, 349}$", False, "a space after the comma makes a list"),
    Case("math-verify", r"(2, 12) \cup (12, 102)", r"Thus, the answer is $x \in \boxed{(2,12) \cup (12,102)}$", True),
    Case("math-verify", r"\text{E}", r"So the answer is $\boxed{E}$.", True),
    Case("math-verify", "1,2", r"$\boxed{1}\boxed{2}$", True, "adjacent boxes"),
    Case("math-verify", "1,-2", "<think> Okay, so f(x) = (x^2+3x-2)/2 ... **Final Answer** The integers are "
         r"\boxed{-2} and \boxed{1}. </think> Solving $n^2 + n - 2 = 0$ gives the roots: \[ \boxed{-2} \quad "
         r"\text{and} \quad \boxed{1}. \]", True, "think block, two boxes"),
    Case("math-verify", "(37,3,3,13),(17,3,3,7),(3,37,3,13),(3,17,3,7),(3,3,2,3)",
         r"$\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3), (17,3,3,7), (37,3,3,13)}$", True, "unordered tuples"),
    Case("math-verify", "(37,3,3),(17,3,3,7),(3,37,3,13),(3,17,3,7),(3,3,2,3)",
         r"$\boxed{(3, 37, 3, 13), (3, 17, 3, 7), (3, 3, 2, 3), (17,3,3,7), (37,3,3,13)}$", False),
    Case("math-verify", "(p,q)=(3,2)", r"$\boxed{(3, 2)}$", True, "labelled reference"),
    Case("math-verify", r"-12;-11;-10;-8;-7;-6", r"$\boxed{\{-12, -11, -10, -8, -7, -6\}}$", True),
    Case("math-verify", "AB=4,CD=5", r"$\boxed{4, 5}$", True),
    Case("math-verify", r"V_{1}:V_{2}=11:21", r"$\boxed{11:21}$", True, "ratio"),
    Case("math-verify", r"\frac{NO}{BO}=\frac{1}{\sqrt{6}}", r"$\boxed{\frac{1}{\sqrt{6}}}$", True),
    Case("math-verify", "(2,1),(1,2),(-1,-20),(-20,-1)",
         "The solutions are:\n\n\\[\n\\boxed{(1, 2)}, \\boxed{(2, 1)}, \\boxed{(-1, -20)}, \\boxed{(-20, -1)}\n\\]",
         True, "four boxes"),
    Case("math-verify", r"\text{odd}", r"The function is $\boxed{odd}$.", True),
    Case("math-verify", "d", r"$\boxed{\text{E}}$", False),
    Case("math-verify", "1,2,3", r"$\boxed{1}$ and $\boxed{2}$ and $\boxed{3}$", True),
    Case("math-verify", r"x = -5,\ p = \frac{14}{3}", r"$\boxed{-5, \frac{14}{3}}$", True),
    Case("math-verify", r"a=4,\,-8,\,-10", r"$\boxed{-10,-8,4}$", True),
    Case("math-verify", r"p=-1 \text{ and } p=\dfrac{15}{8}", r"$\boxed{p=-1,p=\frac{15}{8}}$", True),
    Case("math-verify", "6 \\text{ and } 8", r"\(\boxed{6,8}\)", True),
    Case("math-verify", r"\text{Even}", r"$\boxed{Even}$", True),
    Case("math-verify", "2, 3, 5, 7, 13", r"$$\boxed{2}, \boxed{3}, \boxed{5}, \boxed{7}, \boxed{13}$$", True),
    Case("math-verify", "-793 < a < 10", r"$$\boxed{(-793, 10)}$$", True, "relation vs interval"),
    Case("math-verify", "a_3 = 2, a_{37} = 19", r"$$\boxed{a_{37} = 19, \quad a_3 = 2}$$", True),
    Case("math-verify", "(2, 2), (1, 3), (3, 3)", r"$$\boxed{(2, 2), (1, 3), (3, 3)}$$", True),
    Case("math-verify", r"0.06 \text{ yuan}", r"$$\boxed{0.06 \text{ yuan}}$$", True),
    Case("math-verify", "(5, 8), (8, 5)", r"$$\boxed{(x, y) = (5, 8) \quad \text{and} \quad (8, 5)}$$", True),
    Case("math-verify", "(2, 2), (6, 2)", r"$$\boxed{(2, 2)} \quad \text{and} \quad \boxed{(6, 2)}$$", True),
    Case("math-verify", r"k \ge 2", r"$$\boxed{k \ge 2}$$", True),
    Case("math-verify", "k = 45, n = 2", r"$$\boxed{k = 45} \quad \text{and} \quad \boxed{n = 2}$$", True),
    Case("math-verify", "1,2,3", r"\boxed{1},\boxed{2},\boxed{3}", True),
    Case("math-verify", "|AB|=1", r"$$\boxed{1}$$", True),
    Case("math-verify", "f(x)=1", r"$$\boxed{1}$$", True),
    Case("math-verify", "n=2, 3, 4", r"So $\boxed{n=1, 2, 3}$.", False),
    Case("math-verify", "D = (0, 1)", r"So $\boxed{D = (0, 1.5)}$.", False),
    Case("math-verify", "19, 46, and 82", r"So $\boxed{19, 46, \text{ and } 82}$.", True),
    Case("math-verify", "19, 46, and 82", r"So $\boxed{21, 36, \text{ and } 82}$.", False),
    Case("math-verify", r"1 - \frac{1}{\mathrm{e}}", r"So $\boxed{1 + \frac{1}{\mathrm{e}}}$.", False,
         r"\mathrm{e} is Euler's number, not a unit"),
    Case("math-verify", r"\pm 2021", r"So $\boxed{2021}$.", False),
    Case("math-verify", r"\pm 2021", r"So $\boxed{-2021, 2021}$.", True),
    Case("math-verify", "12:00", r"So $\boxed{1:00}$.", False),
    Case("math-verify", "4", r"So $\boxed{4\sqrt{2}}$.", False),
    Case("math-verify", "f(x)", r"So $\boxed{f(y)}$.", False, "strict variables"),
]

LM_EVAL = [
    Case("lm-eval", "[2,5)", "The domain is $\\boxed{[2,5)}$.\nFinal Answer: The final answer is $[2,5)$. I hope it is "
         "correct.", True, "Minerva format"),
    Case("lm-eval", r"-\frac{2}{3}", "So $\\frac{a}{b}=-\\frac{2}{3}$.\nFinal Answer: The final answer is "
         "$-\\frac{2}{3}$. I hope it is correct.", True),
    Case("lm-eval", "16", "Final Answer: The final answer is $16$. I hope it is correct.", True),
    Case("lm-eval", "16", "Final Answer: The final answer is $61$. I hope it is correct.", False),
    Case("lm-eval", "24", "Final Answer: The final answer is $24$", True, "cut before 'I hope'"),
    Case("lm-eval", "5", r"Final Answer: The final answer is $5\text{ cm}$. I hope it is correct.", True, "unit"),
    Case("lm-eval", "12", "Final Answer: The final answer is 12 inches. I hope it is correct.", True, "unit word"),
    Case("lm-eval", "36", "Final Answer: The final answer is $36$ square units. I hope it is correct.", True),
    Case("lm-eval", "12", "Final Answer: The final answer is $12$ ways. I hope it is correct.", True),
    Case("lm-eval", "5.50", r"Final Answer: The final answer is $\$5.50$. I hope it is correct.", True, "dollars"),
    Case("lm-eval", "5.5", r"Final Answer: The final answer is $\$5.50$. I hope it is correct.", True, "5.50 = 5.5"),
    Case("lm-eval", "100000", "Final Answer: The final answer is $100,000$. I hope it is correct.", True),
    Case("lm-eval", "100000", r"Final Answer: The final answer is $100{,}000$. I hope it is correct.", True),
    Case("lm-eval", "3", "Final Answer: The final answer is $x=3$. I hope it is correct.", True, "= prefix"),
    Case("lm-eval", r"\frac{1}{2}", r"Final Answer: The final answer is $\frac12$. I hope it is correct.", True),
    Case("lm-eval", r"2\sqrt{2}", r"Final Answer: The final answer is $2\sqrt2$. I hope it is correct.", True),
    Case("lm-eval", "45", r"Final Answer: The final answer is $45^\circ$. I hope it is correct.", True, "degrees"),
    Case("lm-eval", "45", r"Final Answer: The final answer is $45^{\circ}$. I hope it is correct.", True),
    Case("lm-eval", r"\text{(A)}", r"Final Answer: The final answer is $\text{(A)}$. I hope it is correct.", True),
    Case("lm-eval", r"\text{(A)}", r"Final Answer: The final answer is $\text{(D)}$. I hope it is correct.", False),
    Case("lm-eval", "3.5", "Final Answer: The final answer is $3.5$. I hope it is correct.", True, "decimal point"),
    Case("lm-eval", "3.5", "Final Answer: The final answer is $3$. I hope it is correct.", False),
    Case("lm-eval", "1,2,3", r"Final Answer: The final answer is $1,2,\text{and }3$. I hope it is correct.", True),
    Case("lm-eval", r"\frac{\sqrt{3}}{2}", r"Final Answer: The final answer is $\boxed{\frac{\sqrt{3}}{2}}$. I hope it "
         "is correct.", True, "box inside the Minerva line"),
    Case("lm-eval", "7", "We get $\\boxed{8}$ at first, but recounting gives seven.\nFinal Answer: The final answer is "
         "$7$. I hope it is correct.", True, "a later final answer beats an earlier box"),
    Case("lm-eval", "8", "We get $\\boxed{8}$ at first, but recounting gives seven.\nFinal Answer: The final answer is "
         "$7$. I hope it is correct.", False),
]

REALISTIC = [
    Case("realistic", "42", "Summing the series term by term gives 42.\n\nThus, the final answer is:\n\\[\n\\boxed{42}\n\\]",
         True, "Qwen2.5-Math"),
    Case("realistic", "42", "<think>\nFirst try: 41? No, I missed a term, \\boxed{41} is wrong. Recount: 42.\n</think>\n\n"
         "The sum is 42.\n\n**Final Answer**\n\\boxed{42}", True, "Qwen3 thinking"),
    Case("realistic", "41", "<think>\nFirst try: 41? No, I missed a term, \\boxed{41} is wrong. Recount: 42.\n</think>\n\n"
         "The sum is 42.\n\n**Final Answer**\n\\boxed{42}", False, "a box inside the think block does not count"),
    Case("realistic", "42", "<think>\nLet me add them: 10 + 32 = 42, so the answer is \\boxed{42}. Wait, let me "
         "double-check the second term, it might be", False, "cut off while thinking"),
    Case("realistic", "42", "Okay, so 10 + 32 = 42. I am fairly sure.\n</think>\n\nAdding the terms gives "
         "$\\boxed{42}$.", True, "think opened in the prompt"),
    Case("realistic", r"\frac{3}{4}", "## Step 1: Count the outcomes\nThere are 4 outcomes.\n\n## Step 2: Count the "
         "favourable ones\nThree of them work.\n\nTherefore, the final answer is: $\\boxed{\\frac{3}{4}}$. I hope it is "
         "correct.", True, "Llama-3"),
    Case("realistic", "0.75", "Therefore, the final answer is: $\\boxed{\\frac{3}{4}}$. I hope it is correct.", True,
         "fraction vs decimal reference"),
    Case("realistic", "-2, 1", "<think>\nfactor: (n-1)(n+2) = 0\n</think>\n\n**Solution:**\nThe quadratic "
         "$n^2+n-2=0$ factors as $(n-1)(n+2)=0$.\n\n\\[\n\\boxed{-2, 1}\n\\]", True, "DeepSeek-R1"),
    Case("realistic", "0.25", "Final Answer: The final answer is $\\frac{1}{4}$. I hope it is correct.", True,
         "Minerva, decimal reference"),
    Case("realistic", "7", "Each row has 7 seats.\n\n**Answer:** 7", True, "Gemma"),
    Case("realistic", "12", "Multiplying gives 12, so the answer is **12**.", True, "bold answer"),
    Case("realistic", "336", "The number of arrangements is 8*7*6 = 336.\n\nAnswer: 336", True, "DAPO last line"),
    Case("realistic", r"\frac{1}{2}", "Half of the cards are red.\nAnswer: $\\frac{1}{2}$", True, "DAPO with TeX"),
    Case("realistic", "120", "The base is 6 by 4 and the height is 5.\n\nFinal Answer: The volume of the prism is 120.",
         True, "answer sentence"),
    Case("realistic", "7", "Counting the tiles row by row gives seven in total.\n\n**Final Answer**\n\n7", True,
         "final answer heading"),
    Case("realistic", "12", "Part one gives $\\boxed{5}$ apples.\n\nFor the total we add the second basket.\n\n"
         "Final Answer: 12", True, "a later final answer beats an earlier box"),
    Case("realistic", "5", "Part one gives $\\boxed{5}$ apples.\n\nFor the total we add the second basket.\n\n"
         "Final Answer: 12", False),
    Case("realistic", "24", "The rectangle is 4 by 6, so its area is $24$.", True, "plain last formula"),
    Case("realistic", "7", "Subtracting 3 from both sides and dividing by 2, we get $x = 7$.", True,
         "last formula is an equation"),
    Case("realistic", "-2, 1", "The solutions are $\\boxed{-2}$ and $\\boxed{1}$.", True, "one box per solution"),
    Case("realistic", "1, -2", "The solutions are $x = \\boxed{1}$ and $x = \\boxed{-2}$.", True),
    Case("realistic", "6", "So the answer is $\\boxed{6}$.<|im_end|>", True, "chat special token"),
    Case("realistic", "6", "So the answer is $\\boxed{6}$.</s>", True),
    Case("realistic", "9", "**Final Answer:** $\\boxed{9}$", True),
    Case("realistic", "9", "Thus the final answer is **9**.", True),
    Case("realistic", "18.90", "The total cost is $\\boxed{\\$18.90}$.", True, "money"),
    Case("realistic", "18.9", "The total cost is $\\boxed{\\$18.90}$.", True),
    Case("realistic", "10000", "There are $\\boxed{10{,}000}$ such numbers.", True),
    Case("realistic", r"\text{(B)}", "The correct choice is $\\boxed{\\text{(B)}}$.", True),
    Case("realistic", r"\text{(B)}", "The correct choice is $\\boxed{\\textbf{(C)}}$.", False),
    Case("realistic", r"(-\infty, 2) \cup (3, \infty)", "So $x \\in \\boxed{(-\\infty, 2) \\cup (3, \\infty)}$.", True),
    Case("realistic", "[2, 3]", "So $x \\in \\boxed{(2, 3)}$.", False),
    Case("realistic", "3+4i", "Multiplying out, $z = \\boxed{3+4i}$.", True),
    Case("realistic", "3+4i", "Multiplying out, $z = \\boxed{4i+3}$.", True),
    Case("realistic", "3+4i", "Multiplying out, $z = \\boxed{3-4i}$.", False),
    Case("realistic", r"\sqrt{12}", "Simplifying, the length is $\\boxed{2\\sqrt{3}}$.", True),
    Case("realistic", r"\frac{1}{3}", "As a fraction, $0.\\overline{3}$ is our answer: $\\boxed{0.\\overline{3}}$.", True,
         "repeating decimal"),
    Case("realistic", r"\frac{4}{11}", "So the decimal is $\\boxed{0.\\overline{36}}$.", True),
    Case("realistic", r"\frac{1}{6}", "So the decimal is $\\boxed{0.1\\overline{6}}$.", True),
    Case("realistic", "15", "The area is $\\boxed{15 \\text{ cm}^2}$.", True),
    Case("realistic", "5", "The side is $\\boxed{5 \\text{ inches}}$.", True),
    Case("realistic", "13", "The diagonal is $\\boxed{12\\text{ meters}}$.", False),
    Case("realistic", "1024", "So $2^{10} = \\boxed{1024}$.", True),
    Case("realistic", "1024", "So the count is $\\boxed{2^{10}}$.", True, "unevaluated power"),
    Case("realistic", "3628800", "So the count is $\\boxed{10!}$.", True, "factorial"),
    Case("realistic", "y=2x+3", "The line is $\\boxed{y = 2x + 3}$.", True),
    Case("realistic", "y = 2x + 3", "The line is $\\boxed{2x - y + 3 = 0}$.", True, "rearranged equation"),
    Case("realistic", r"\begin{pmatrix} 1 \\ -2 \end{pmatrix}",
         "The vector is $\\boxed{\\begin{pmatrix} 1 \\\\ -2 \\end{pmatrix}}$.", True),
    Case("realistic", r"\begin{pmatrix} 1 \\ -2 \end{pmatrix}",
         "The vector is $\\boxed{\\begin{pmatrix} -1 \\\\ 2 \\end{pmatrix}}$.", False),
    Case("realistic", r"\frac12", "So it is $\\boxed{\\dfrac{2}{4}}$.", True),
    Case("realistic", "x^2+2x+1", "Expanding, we get $\\boxed{(x+1)^2}$.", True),
    Case("realistic", r"-\frac{2}{3}", "Hence $\\boxed{-\\frac{2}{3}}$.", True),
    Case("realistic", r"-\frac{2}{3}", "Hence $\\boxed{\\frac{2}{3}}$.", False),
    Case("realistic", r"\boxed{5}", "So the answer is 5.", True, "boxed reference"),
    Case("realistic", "5", "so the answer is $\\boxed 5$.", True, "boxed without braces"),
    Case("realistic", r"\frac{\sqrt{3}}{2}", "So $\\sin 60^\\circ = \\boxed{\\frac{\\sqrt{3}}{2}}$.", True),
    Case("realistic", "1, 2", "The set is $\\boxed{\\{1, 2\\}}$.", True, "escaped braces"),
    Case("realistic", "7", "The result is \\fbox{7}.", True, "fbox"),
    Case("realistic", "25\\%", "The probability is $\\boxed{\\frac{1}{4}}$.", True, "percent reference, fraction reply"),
    Case("realistic", r"\frac{1}{4}", "The probability is $\\boxed{25\\%}$.", True, "percent reply"),
    Case("realistic", "30", "The angle measures $\\boxed{30^\\circ}$.", True),
    Case("realistic", "2", "The remainder is $\\boxed{2}$. Let me double check: 17 = 3*5 + 2. Yes.", True,
         "check after the box"),
    Case("realistic", "4", "We get \\boxed{3} for the first part.\n\nNow the second part is harder. After simplifying "
         "the sum of the remaining terms we find that the answer to the question is \\boxed{4}.", True,
         "far-apart boxes: the last one"),
]

ADVERSARIAL = [
    Case("adversarial", r"0.\overline{36}", "So the decimal is $\\boxed{0.\\overline{45}}$.", False,
         "truncated prefix: both parse as 0 in math-verify"),
    Case("adversarial", "7", "So $z = \\boxed{3+4\\mathrm{i}}$.", False, r"math-verify drops \mathrm{i} as a unit"),
    Case("adversarial", "3", "So the sum is $\\boxed{3+\\frac{1}{\\mathrm{e}^2}}$.", False,
         r"math-verify drops \mathrm{e} as a unit"),
    Case("adversarial", "3", "So the sum is $3+\\frac{1}{\\mathrm{e}^2}$.", False, "wrapped in $..$"),
    Case("adversarial", "1", "So the answer is $\\boxed{12}$.", False),
    Case("adversarial", "1", "So the answer is $\\boxed{1/2}$.", False),
    Case("adversarial", "2", "So the answer is $\\boxed{2^{10}}$.", False),
    Case("adversarial", r"\frac12", "So the answer is $\\boxed{\\frac{1}{2}x}$.", False),
    Case("adversarial", "5", "So the answer is $\\boxed{5x}$.", False),
    Case("adversarial", "5", "So the answer is $\\boxed{x}$.", False),
    Case("adversarial", "5", "So the answer is $\\boxed{5 + i}$.", False),
    Case("adversarial", "3", "So the answer is $\\boxed{3\\sqrt{2}}$.", False),
    Case("adversarial", "30", "So the answer is $\\boxed{30\\pi}$.", False),
    Case("adversarial", "[1,2]", "So the answer is $\\boxed{(1, 2]}$.", False),
    Case("adversarial", "5", "So the answer is $\\boxed{-5}$.", False),
    Case("adversarial", "5", "So the answer is $\\boxed{5!}$.", False),
    Case("adversarial", "10^{100}", "So the answer is $\\boxed{10^{100}+1}$.", False, "numeric closeness"),
    Case("adversarial", "123456789012345678", "So the answer is $\\boxed{123456789012345679}$.", False),
    Case("adversarial", "3", "The answer is either $\\boxed{3}$ or $\\boxed{4}$.", False, "a hedge is not an answer"),
    Case("adversarial", "5", "<think>\nIt is probably \\boxed{5}.\n</think>\nI am not sure about this one.", False,
         "the box is only in the reasoning"),
    Case("adversarial", "7", "Let $x = 7$ and then we compute the", False, "trails off mid-derivation"),
    Case("adversarial", "7", "I could not solve this problem.", False),
    Case("adversarial", "7", "So the answer is $\\boxed{}$.", False, "empty box"),
    Case("adversarial", "7", "The answer is \\boxed{7", False, "unclosed box"),
    Case("adversarial", "7", "", False, "empty reply"),
    Case("adversarial", r"\pi", "So the answer is $\\boxed{3.14}$.", False, "approximation"),
    Case("adversarial", r"\sqrt{2}", "So the answer is $\\boxed{1.4142}$.", False, "approximation"),
    Case("adversarial", "e", "So the answer is $\\boxed{2.718}$.", False, "approximation"),
    Case("adversarial", r"\text{(B)}", "So the answer is $\\boxed{\\text{(C)}}$.", False),
    Case("adversarial", r"\text{Evelyn}", "So the answer is $\\boxed{\\text{Evelin}}$.", False),
    Case("adversarial", "ab", "So the answer is $\\boxed{ba}$.", False, "text is not a product"),
    Case("adversarial", r"\infty", "So the answer is $\\boxed{-\\infty}$.", False),
    Case("adversarial", "(1,2)", "So the answer is $\\boxed{(2,1)}$.", False, "ordered pair"),
    Case("adversarial", "2", "So the answer is $\\boxed{2}$ if $a > 0$, and $\\boxed{-2}$ otherwise.", False,
         "conditional answers"),
    Case("adversarial", "3", "The final answer is correct. We showed the sum is 4.", False, "judgement word"),
    Case("adversarial", "9", "So $\\boxed{9}$ is the count for part (a).\n\nFor part (b) we need the other count, which "
         "turns out to be $\\boxed{11}$.", False, "the last box is a different part"),
]

CASES = HENDRYCKS + MATH_VERIFY + LM_EVAL + REALISTIC + ADVERSARIAL
