"""Screen, assemble and judge the provers' published proofs: how many honest proofs does the reward refuse?

    python bench/lean/screen_real_proofs.py [--raw bench/lean/raw] [--out bench/lean/results/screen_real_proofs.json]

Each source of SOURCES is one archive (or JSONL) file of a public repository at a pinned commit; put its bytes at
`<raw>/<owner>+<name>/<path>` first (the folder is git-ignored; fetched proofs never go into a commit), e.g.
`git --git-dir <mirror of the repo> show <commit>:<path> > bench/lean/raw/<owner>+<name>/<path>`. A missing file is
reported and skipped. Every proof was checked by its authors, so each is an honest proof.

A source is a zip of proof files or of LeanDojo proof-search results (JSON), a JSONL file of statement + proof rows, a
folder of proof files, or a file of many theorems (each proved one is a proof). A proof is paired with the dataset row
of its theorem's name (`/work/shared/data` minif2f/proofnet, the statements the reward checks): the proof file, as a
model's ```lean4 block, goes through `screen` with the row's statement and header, `build_check`, the REPL double's
Lean (`lean_env.testing.semantics`: every command elaborates, `#print axioms` answers as Lean does) and `judge`. So
every refusal comes from the screen or from the judge's layout checks (check and audit lines located and answered as
for an honest proof), never from Lean. A proof whose own copy of the statement differs from the dataset's (another
miniF2F revision) is counted as `statement_differs` and then checked against its own statement and its own header
(the file's leading import/set_option/open lines).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from lean_env import build_check, judge, screen  # noqa: E402
from lean_env.assemble import DEFAULT_HEADER  # noqa: E402
from lean_env.backends.common import parse_repl_response  # noqa: E402
from lean_env.lexer import lex  # noqa: E402
from lean_env.testing.semantics import FakeLean  # noqa: E402
from lean_env.types import Verdict  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA = Path("/work/shared/data")


@dataclass(frozen=True)
class Source:
    id: str
    prover: str
    repo: str
    commit: str
    path: str          # the archive, JSONL file or folder in the repository
    member: str = r"\.lean$"   # which archive members are proofs
    many: bool = False         # each file of the folder holds many theorems (`member`: which files)


SOURCES = (
    Source("kimina-preview-minif2f-test", "Kimina-Prover-Preview", "MoonshotAI/Kimina-Prover-Preview",
           "7abd61a5d9861bf5c15b195c216c1bb233ac32e4", "minif2f_test_solved.zip"),
    Source("kimina-preview-minif2f-test-filtered", "Kimina-Prover-Preview", "MoonshotAI/Kimina-Prover-Preview",
           "7abd61a5d9861bf5c15b195c216c1bb233ac32e4", "minif2f_test_solved_filtered_0710.zip"),
    Source("deepseek-v2-minif2f", "DeepSeek-Prover-V2", "deepseek-ai/DeepSeek-Prover-V2",
           "e598a57ea3284997d4a2a168a069fdd5064afbc8", "minif2f-solutions.zip"),
    Source("seed-prover-minif2f", "Seed-Prover", "ByteDance-Seed/Seed-Prover",
           "7d3875a2bd68538d1f98ea62f5c9a56035d33b5f", "SeedProver/MiniF2F.zip"),
    Source("non-overlapping-failures-minif2f-test", "Kimina-Prover-Preview-Distill-7B, Goedel-Prover-SFT, "
           "DeepSeek-Prover-V2-7B", "script-jpg/non-overlapping-failures", "b163c44cc7502d906343b9db2abde8935c2864d9",
           "data/corrected_proofs"),
    Source("deepseek-v1.5-few-shot", "DeepSeek-Prover-V1.5 few-shot examples", "deepseek-ai/DeepSeek-Prover-V1.5",
           "2c4ba9119eef74d0d611f494261b2c5bae98c69a", "datasets/minif2f_valid_few_shot.jsonl"),
    # issue 48: sources not used before (a folder of `.lean` files, one proof file each)
    Source("bfs-prover-v2-minif2f", "BFS-Prover-V2 (prover and planner outputs)", "nyc030325/BFS-Prover-V2",
           "4ef51ead9124f32ad141e8bc1ff025143ab781ed", "MiniF2F"),
    Source("mathlib-archive-imo", "human-written IMO solutions (Mathlib Archive)", "xinhjBrant/mathlib4",
           "2f65ba7f1a9144b20c8e7358513548e317d26de1", "Archive/Imo"),
    # 2026-12-06: LeanDojo proof-search results (JSON in a zip) and a file of many theorems
    Source("internlm2-minif2f-test", "InternLM2-Math-7B/20B, InternLM2-Math-Plus-7B/20B (LeanDojo search)",
           "InternLM/InternLM-Math", "eaead17b7b95670f0592f5b818080fb6762f3fdf", "minif2f/output.zip",
           r"_minif2f_test/results__.*\.json$"),
    Source("lean-dojo-mew-minif2f", "human-written miniF2F proofs (Lean 3 miniF2F, ported)", "rah4927/lean-dojo-mew",
           "d00c776260c77de7e70125ef0cd119de6c0ff1de", "MiniF2F", r"(Test|Validation)\.lean$", many=True),
)


def _proofs(src: Source, raw: Path, test: list[dict]) -> list[tuple[str, str]]:
    """(member id, the proof file's text) of one source; [] when its file is not under `raw`. A folder holds `.lean`
    proof files, or `<i>/<model>/<attempt>.txt` tactic blocks (at column 0) proving miniF2F test problem i (`test`,
    in dataset order): the checked file was that row's statement, a line break and the block (the source's eval
    notebook); with `many`, files of many theorems (`_theorems`). A zip whose `member` pattern ends in `json$` holds
    LeanDojo search results (`_searched`)."""
    file = raw / src.repo.replace("/", "+") / src.path
    if not file.exists():
        return []
    if src.many:
        return [p for f in sorted(file.iterdir()) if re.search(src.member, f.name) for p in _theorems(f)]
    if file.is_dir() and not any(file.glob("*/*/*.txt")):   # one proof file per `.lean` file
        return sorted((str(p.relative_to(file)), p.read_text("utf-8")) for p in file.rglob("*.lean"))
    if file.is_dir():
        return sorted((str(p.relative_to(file)), test[int(p.parts[-3])]["formal_statement"] + "\n" +
                       p.read_text("utf-8")) for p in file.glob("*/*/*.txt"))
    if file.suffix == ".jsonl":   # statement + proof rows
        rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [(r["name"], r["formal_statement"] + r["formal_proof"]) for r in rows]
    with zipfile.ZipFile(io.BytesIO(file.read_bytes())) as z:
        members = sorted((n, z.read(n).decode("utf-8")) for n in z.namelist()
                         if re.search(src.member, n) and "__MACOSX" not in n)
    return [p for n, text in members for p in _searched(n, text)] if src.member.endswith("json$") else members


def _searched(member: str, text: str) -> list[tuple[str, str]]:
    """The proofs a LeanDojo proof search found (`results[].attempt_results[]` with `success`; `proof` is the list of
    tactics or their lines): LeanDojo ran the tactics one by one on the theorem of `example.statement`, so the checked
    proof is that statement, `:= by` and the tactics indented under it."""
    def block(proof: str | list[str]) -> str:
        lines = "\n".join(proof).splitlines() if isinstance(proof, list) else proof.splitlines()
        return "".join(f"  {line}\n" for line in lines)
    return [(f"{member}:{r['example']['full_name']}", r["example"]["statement"] + " := by\n" + block(a["proof"]))
            for r in json.loads(text)["results"] for a in r["attempt_results"] if a["success"]]


def _theorems(file: Path) -> list[tuple[str, str]]:
    """The proved theorems of a file of many (`theorem` at column 0 up to the next): those whose block says `sorry`
    are unproved statements and left out. Departure (from the file as checked): Mathport's `#align` line after each
    theorem is dropped; it is the file's alignment note, not part of the theorem's proof."""
    blocks = re.split(r"\n(?=theorem )", file.read_text("utf-8"))[1:]
    return [(f"{file.name}:{b.split()[1]}", re.sub(r"(?m)^#align .*\n?", "", b)) for b in blocks if "sorry" not in b]


def _dataset() -> tuple[dict[str, dict], list[dict]]:
    """Rows by name, and the miniF2F test rows in file order."""
    rows, test = {}, []
    for name in ("proofnet.jsonl", "minif2f.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            rows[row["name"]] = row
            if name == "minif2f.jsonl" and row["split"] == "test":
                test.append(row)
    return rows, test


def _theorem(text: str) -> tuple[str, str] | None:
    """(name, own statement `theorem … := by`) of the last `theorem`/`lemma` of a proof file whose name is a row of the
    dataset, else of its last one; the statement ends at the first `:=` outside brackets."""
    code = [t for t in lex(text) if t.kind != "comment"]
    found = None
    for i in range(len(code) - 1):
        if code[i].text in ("theorem", "lemma") and code[i + 1].kind == "ident" and code[i - 1].text != "private":
            depth = 0
            for t in code[i + 2:]:
                if t.kind == "sym":   # bracket tokens such as `[MOD` open one
                    depth += sum(map(t.text.count, "([{⟨⦃")) - sum(map(t.text.count, ")]}⟩⦄"))
                if t.text == ":=" and depth == 0:
                    found = (code[i + 1].text, text[code[i].start:t.end] + " by\n")
                    break
    return found


def _own_header(text: str) -> str:
    """The file's leading import / set_option / open lines (blank lines kept)."""
    lines = []
    for line in text.splitlines(keepends=True):
        if line.strip() and not re.match(r"(import|set_option|open)\b", line):
            break
        lines.append(line)
    return "".join(lines)


class _DoubleLean:
    """The REPL double's Lean, in process: a backend whose every command elaborates (unless it says `sorry`)."""

    def __init__(self) -> None:
        self.lean = FakeLean()

    def run(self, snippet):
        header, _ = self.lean.command(snippet.header, None)
        answer, _ = self.lean.command(snippet.body, header["env"])
        return parse_repl_response(snippet.id, answer, 0.0)


def check(statement: str, header: str, code: str, lean: _DoubleLean) -> tuple[str, str, str]:
    """(stage, verdict, reason) of one proof: stage `screen`, `judge` or `paid`."""
    screened = screen(statement, f"```lean4\n{code}\n```\n", header=header)
    if not screened.ok:
        return "screen", screened.verdict.value, screened.reason
    plan = build_check(screened, header)
    j = judge(lean.run(plan.snippet), plan)
    return ("paid", "", "") if j.verdict is Verdict.VALID else ("judge", j.verdict.value, j.detail)


def run(raw: Path) -> dict:
    (rows, test), lean = _dataset(), _DoubleLean()
    sources, results = [], []
    for src in SOURCES:
        proofs = _proofs(src, raw, test)
        sources.append({"id": src.id, "prover": src.prover, "repo": src.repo, "commit": src.commit,
                        "path": src.path, "proofs": len(proofs), "present": bool(proofs)})
        for member, text in proofs:
            found = _theorem(text)
            entry = {"source": src.id, "id": member, "theorem": found[0] if found else None}
            if found is None:
                results.append({**entry, "stage": "pairing", "verdict": "", "reason": "no theorem in the file"})
                continue
            name, own = found
            row = rows.get(name)
            stage, verdict, reason = ("", "", "")
            if row is not None:
                stage, verdict, reason = check(row["formal_statement"], row["header"], text, lean)
                entry["statement"] = "dataset"
            if row is None or (stage == "screen" and verdict == Verdict.STATEMENT_MISMATCH.value):
                entry["statement"] = "own" if row is None else "statement_differs"
                stage, verdict, reason = check(own, _own_header(text) or DEFAULT_HEADER, text, lean)
            results.append({**entry, "stage": stage, "verdict": verdict, "reason": reason})
    return _summary(sources, results)


WHY_REFUSED = {   # refusal class (a regex on the reason) -> why such a proof cannot be accepted safely
    r"`native_decide`": "trusts compiled code (the axiom Lean.ofReduceBool); the screen forbids it and the audit "
                        "would refuse the axiom",
    r"`(exact|apply|rw)\?`": "searches the environment, which holds the reference axiom of the statement check",
    r"found `#print`": "a command after the theorem; the red-team corpus (round 1, io) refuses a `#print axioms` "
                       "there (dropping it would be safe: a policy change to decide)",
    r"`#align_import`": "a `#` command (Mathport's alignment note, Mathlib Archive): the allowlist refuses every `#` "
                        "command, since `#eval`/`#print`/`#exit` run code, print or end the file",
    r"syntax quotation": "metaprogramming (BFS-Prover-V2's planner defines its own tactic with `elab`/`macro`): code "
                         "that would run in the checker",
    r"shadows": "a helper named like an identifier of the statement could change what the statement means (these "
                "Archive files state their theorem about their own `IsGood`: a def, or a structure the screen reads "
                "since issue 57)",
    r"unterminated comment": "a bench artifact: the file's doc comment holds a ``` fence, which ends the reply's "
                             "code block (a model's reply would be cut there too)",
}


def _summary(sources: list[dict], results: list[dict]) -> dict:
    refused = [r for r in results if r["stage"] not in ("paid", "pairing")]
    total = sum(r["stage"] != "pairing" for r in results)
    reasons = Counter(re.sub(r" \(line \d+\)", "", r["reason"]).replace(f"`{r['theorem']}`", "<theorem>")
                      for r in refused)
    return {
        "command": "python bench/lean/screen_real_proofs.py",
        "sources": sources,
        "proofs": total,
        "paid": total - len(refused),
        "refused": len(refused),
        "refusal_rate": round(len(refused) / total, 4) if total else None,
        "by_source": {s["id"]: {"proofs": sum(r["source"] == s["id"] and r["stage"] != "pairing" for r in results),
                                "refused": sum(r["source"] == s["id"] for r in refused)} for s in sources},
        "statement": dict(Counter(r.get("statement", "none") for r in results)),
        "unpaired": [{"source": r["source"], "id": r["id"]} for r in results if r["stage"] == "pairing"],
        "refusal_classes": {reason: {"proofs": n, "why": next((why for pattern, why in WHY_REFUSED.items()
                                                               if re.search(pattern, reason)), None)}
                            for reason, n in reasons.most_common()},
        "refusals": [{k: r[k] for k in ("source", "id", "theorem", "statement", "stage", "verdict", "reason")}
                     for r in refused],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw", type=Path, default=ROOT / "bench/lean/raw", help="where the sources' files lie")
    ap.add_argument("--out", type=Path, default=ROOT / "bench/lean/results/screen_real_proofs.json")
    args = ap.parse_args(argv)
    summary = run(args.raw)
    args.out.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    missing = [s["path"] for s in summary["sources"] if not s["present"]]
    print(f"{summary['proofs']} proofs, {summary['refused']} refused ({summary['refusal_rate']}); missing: {missing}")
    for reason, row in summary["refusal_classes"].items():
        print(f"{row['proofs']:5d}  {reason[:100]}  <- {row['why'] or 'no reason known: an honest proof refused'}")


if __name__ == "__main__":
    main()
