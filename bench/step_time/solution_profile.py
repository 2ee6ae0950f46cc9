"""How long a thinking prover's solution is once the reprompt's think-strip has run: the sibling-solution length of
the step-time benchmark's *prover profile* (issue 49), from published prover outputs.

    python bench/step_time/solution_profile.py --tokenizer <the benchmark model's folder> \\
        --out bench/step_time/solution_profile.json

A thinking prover (Kimina-Prover, DeepSeek-Prover-V2) ends its reply with the Lean code after its reasoning, and
`sdpo_ext.teacher.reprompt.remove_thinking` keeps only that part for a sibling's teacher prompt. The published
proof files are that code: each is counted as the reply's final part, a ```lean4 block holding the file without its
leading header (import / set_option / open lines, which the prompt's statement does not repeat either), in tokens of
the benchmark's tokenizer. The sources (bench/lean/screen_real_proofs.py's, at the same commits) are read from
bench/lean/raw/<owner>+<name>/<path> (git-ignored; put them there with `git show <commit>:<path>` from a mirror), the
67 DeepSeek-Prover-V1.5 few-shot proofs from /work/shared/data. A missing source is reported and skipped. The
stated length (`tokens`) is the mean of PRIMARY (the recipes train Kimina-Prover-Distill, whose replies have this form).
"""
from __future__ import annotations

import argparse
import json
import statistics
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "bench" / "lean" / "raw"
FEW_SHOT = Path("/work/shared/data/minif2f_valid_few_shot.jsonl")
PROFILE = Path(__file__).with_name("solution_profile.json")
SOURCES = {  # id: (prover, repository, commit, path in it)
    "kimina-preview-minif2f-test": ("Kimina-Prover-Preview", "MoonshotAI/Kimina-Prover-Preview",
                                    "7abd61a5d9861bf5c15b195c216c1bb233ac32e4", "minif2f_test_solved.zip"),
    "deepseek-v2-minif2f": ("DeepSeek-Prover-V2", "deepseek-ai/DeepSeek-Prover-V2",
                            "e598a57ea3284997d4a2a168a069fdd5064afbc8", "minif2f-solutions.zip"),
}
PRIMARY = "kimina-preview-minif2f-test"
HEADER_WORDS = ("import ", "set_option ", "open ")


def solution_text(lean_file: str) -> str:
    """The reply's part after think-strip for one proof file: its code without the leading header, in a lean4 block."""
    lines = lean_file.splitlines()
    start = 0
    while start < len(lines) and (not lines[start].strip() or lines[start].startswith(HEADER_WORDS)):
        start += 1
    return "```lean4\n" + "\n".join(lines[start:]).strip() + "\n```"


def archive_texts(path: Path) -> list[str]:
    """Every .lean member of a zip archive, as solution texts."""
    with zipfile.ZipFile(path) as archive:
        return [solution_text(archive.read(n).decode()) for n in sorted(archive.namelist()) if n.endswith(".lean")]


def few_shot_texts(path: Path) -> list[str]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [solution_text(r["formal_statement"] + r["formal_proof"]) for r in rows]


def distribution(tokens: list[int]) -> dict:
    """Count, mean and the 10/25/50/75/90th percentiles (nearest rank) and maximum of token counts."""
    ranked = sorted(tokens)

    def at(q: float) -> int:
        return ranked[min(len(ranked) - 1, int(q * len(ranked)))]

    return {"proofs": len(ranked), "mean": round(statistics.fmean(ranked), 1),
            **{f"p{int(q * 100)}": at(q) for q in (0.1, 0.25, 0.5, 0.75, 0.9)}, "max": ranked[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", type=Path, required=True, help="folder of the tokenizer to count with")
    parser.add_argument("--raw", type=Path, default=RAW)
    parser.add_argument("--out", type=Path, default=PROFILE)
    args = parser.parse_args()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    texts: dict[str, list[str]] = {}
    sources: dict[str, dict] = {}
    for source, (prover, repo, commit, path) in SOURCES.items():
        file = args.raw / repo.replace("/", "+") / path
        sources[source] = {"prover": prover, "repo": repo, "commit": commit, "path": path, "present": file.exists()}
        if file.exists():
            texts[source] = archive_texts(file)
        else:
            print(f"missing: {file} (git show {commit}:{path} from a mirror of {repo})")
    sources["deepseek-v1.5-few-shot"] = {"prover": "DeepSeek-Prover-V1.5 few-shot examples", "path": str(FEW_SHOT),
                                         "present": FEW_SHOT.exists()}
    if FEW_SHOT.exists():
        texts["deepseek-v1.5-few-shot"] = few_shot_texts(FEW_SHOT)
    if PRIMARY not in texts:
        parser.exit(2, f"error: {PRIMARY} is missing (put {SOURCES[PRIMARY][3]} under {args.raw})\n")
    counts = {s: [len(tokenizer.encode(t, add_special_tokens=False)) for t in ts] for s, ts in texts.items()}
    profile = {
        "command": f"python bench/step_time/solution_profile.py --tokenizer {args.tokenizer} --out {args.out}",
        "counted_as": "a ```lean4 block of the proof file without its header lines, in tokens of the tokenizer",
        "tokenizer_vocab": len(tokenizer), "primary": PRIMARY,
        "tokens": round(statistics.fmean(counts[PRIMARY])),
        "sources": {s: {**about, **({"tokens": distribution(counts[s])} if s in counts else {})}
                    for s, about in sources.items()},
    }
    args.out.write_text(json.dumps(profile, indent=1) + "\n")
    for s, row in profile["sources"].items():
        print(s, row.get("tokens", "missing"))
    print(f"stated prover-profile solution: {profile['tokens']} tokens (mean of {PRIMARY})")


if __name__ == "__main__":
    main()
