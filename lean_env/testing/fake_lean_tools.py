"""Fake `lake`, `lean`, `comparator`, `lean4checker` and `safe_verify` executables for the offline re-check tests
(`lean_env.recheck`).

They model what the real tools print and return, as read in their sources:
- `lake env CMD ARGS…` runs CMD with the environment; a missing CMD is `error: no such file or directory`, exit 1.
- `lean --json --root=R -o OLEAN FILE` prints one JSON message per line (fileName, pos {line, column}, endPos,
  severity information|warning|error, caption, data), 1-based lines of the whole file, exit 1 when an error was
  reported; `#print axioms n` (or `_root_.n`) answers `'n' depends on axioms: [propext]`, the statement check
  `theorem _root_.sdpo_check_… : type_of% … := …` passes silently (`-- fake:retyped` in the file makes it a
  `type mismatch`); an unknown `import` is an error on line 1. The olean is written only without errors.
- comparator (Main.lean): prints `Building M` / `Exporting #[…] from M` per stage, build errors from lake, and on
  failure `uncaught exception: <reason>` on stderr with exit 1; on success `Your solution is okay!`, exit 0.
- lean4checker (Main.lean): `Searching for modules matching: [M]`, `Found 1 modules to check` on stdout; a kernel
  failure prints `lean4checker found a problem in M` and `uncaught exception: (kernel) …` on stderr, exit 1; no olean:
  `uncaught exception: Could not find any oleans for: M`, exit 1.
- safe_verify (Main.lean): stderr `Replaying <olean>` per file, `<n> used disallowed axioms. […]`, `Found a problem in
  <file> with declaration <n>: <failure>`, then `SafeVerify check passed.` (exit 0) or `uncaught exception: SafeVerify
  check failed. …` / `uncaught exception: (kernel) …` (exit 1).
Markers in the checked text (`-- fake:<what>`) pick the misbehaviour: error, tamper, hang, crash, no-olean, mismatch,
axiom, export-crash, challenge-broken.
"""
from __future__ import annotations

import stat
import sys
from pathlib import Path

LAKE = r'''
import os, sys
args = sys.argv[1:]
assert args[0] == "env", args
cmd = args[1:]
try:
    os.execvp(cmd[0], cmd)
except OSError:
    print("error: no such file or directory (error code: 2)", file=sys.stderr)
    sys.exit(1)
'''

LEAN = r'''
import json, re, sys
args = sys.argv[1:]
olean = args[args.index("-o") + 1]
source = args[-1]
text = open(source).read()
def msg(line, severity, data):
    print(json.dumps({"fileName": source, "pos": {"line": line, "column": 0}, "endPos": None,
                      "keepFullRange": False, "severity": severity, "caption": "", "data": data}))
errors = 0
for number, line in enumerate(text.splitlines(), 1):
    m = re.match(r"import (\S+)", line)
    if m and m.group(1) not in ("Mathlib", "Aesop"):
        msg(1, "error", f"unknown module prefix '{m.group(1)}'")
        errors += 1
    m = re.match(r"#print axioms (?:_root_\.)?(\S+)", line)
    if m:
        msg(number, "information", f"'{m.group(1)}' depends on axioms: [propext]")
    if re.match(r"(set_option maxHeartbeats \d+ in )?(theorem|noncomputable def) _root_\.\S+ : type_of% ", line) \
            and "fake:retyped" in text:
        msg(number, "error", "type mismatch\n  @t1\nhas type\n  p : Prop\nbut is expected to have type\n  p : Prop")
        errors += 1
    if "sorry" in line:
        msg(number, "warning", "declaration uses 'sorry'")
    if "fake:error" in line:
        msg(number, "error", "unsolved goals\n⊢ False")
        errors += 1
if errors:
    sys.exit(1)
if "fake:no-olean" not in text:
    open(olean, "w").write("olean\n" + " ".join(m for m in ("tamper", "axiom", "mismatch") if f"fake:{m}" in text))
'''

COMPARATOR = r'''
import json, os, signal, subprocess, sys, time
cfg = json.load(open(sys.argv[1]))
def path(module):
    return os.path.join(os.getcwd(), *module.split(".")) + ".lean"
def fail(reason):
    print(f"uncaught exception: {reason}", file=sys.stderr)
    sys.exit(1)
names = cfg["theorem_names"] + cfg.get("definition_names", [])
texts = {}
for module in (cfg["challenge_module"], cfg["solution_module"]):
    print(f"Building {module}", flush=True)
    if not os.path.exists(path(module)):
        print(f"error: unknown target `{module}`")
        fail("Child exited with 1")
    texts[module] = text = open(path(module)).read()
    if "fake:build-crash" in text:   # lake's child (Lean) died, e.g. an abort or the OOM killer: no Lean error
        fail("Child exited with 134")
    if "fake:challenge-broken" in text or "fake:error" in text:
        print(f"error: {path(module)}:3:2: unsolved goals")
        fail("Child exited with 1")
    if "fake:hang" in text:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        time.sleep(600)
    if "fake:crash" in text:
        os.kill(os.getpid(), signal.SIGSEGV)
    print(f"Exporting #[Nat, String, {', '.join(names)}] from {module}", flush=True)
    if "fake:export-crash" in text:
        fail("Child exited with 134")
solution = texts[cfg["solution_module"]]
if "fake:mismatch" in solution:
    fail(f"Challenge and solution theorem statement do not match: '{names[0]}'")
if "fake:axiom" in solution:
    fail("Illegal axiom detected: 'sorryAx'")
print("Running Lean default kernel on solution.")
if "fake:tamper" in solution:
    print("Lean default kernel rejects the solution")
    fail("(kernel) declaration type mismatch, 'false' has type\n  Prop\nbut it is expected to have type\n  False")
print("Lean default kernel accepts the solution")
print("Your solution is okay!")
'''

LEAN4CHECKER = r'''
import os, signal, sys, time
module = [a for a in sys.argv[1:] if not a.startswith("-")][0]
print(f"Searching for modules matching: [{module}]", flush=True)
found = None
for root in os.environ.get("LEAN_PATH", "").split(os.pathsep):
    candidate = os.path.join(root, *module.split(".")) + ".olean"
    if root and os.path.exists(candidate):
        found = candidate
if found is None:
    print(f"uncaught exception: Could not find any oleans for: {module}", file=sys.stderr)
    sys.exit(1)
print("Found 1 modules to check", flush=True)
olean = open(found).read()
if "tamper" in olean:
    print(f"lean4checker found a problem in {module}", file=sys.stderr)
    print("uncaught exception: (kernel) declaration type mismatch, 'false' has type\n  Prop\n"
          "but it is expected to have type\n  False", file=sys.stderr)
    sys.exit(1)
'''


SAFE_VERIFY = r'''
import os, sys
target, submission = [a for a in sys.argv[1:] if not a.startswith("-")]
def say(text):
    print(text, file=sys.stderr, flush=True)
def fail(reason):
    say(f"uncaught exception: {reason}")
    sys.exit(1)
say("Currently running on Lean v4.9.0")
say(f"Running SafeVerify on target file: {target} and submission file: {submission}.")
for path in (target, submission):
    say("------------------")
    say(f"Replaying {path}")
    if not os.path.exists(path):
        fail(f"object file '{path}' does not exist")
    if "tamper" in open(path).read():
        fail("(kernel) declaration type mismatch, 'false' has type\n  Prop\nbut it is expected to have type\n  False")
    say("Finished setting up the environment.")
    say("Finished replay. Found 2 declarations.")
text = open(submission).read()
say("------------------")
if "axiom" in text:
    say("t1 used disallowed axioms. [sorryAx]")
say("------------------")
if "axiom" in text or "mismatch" in text:
    say(f"Found a problem in {submission} with declaration t1: {'axioms' if 'axiom' in text else 'thmType'}")
    say("------------------")
    fail("SafeVerify check failed. For more diagnostic information about failures, run safe_verify with the -v "
         "(or --verbose) flag.")
say("------------------")
say("SafeVerify check passed.")
'''


def install(bin_dir: Path) -> dict[str, Path]:
    """Write the fakes into `bin_dir` as executables (shebang: this interpreter); the caller puts it on PATH."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, body in (("lake", LAKE), ("lean", LEAN), ("comparator", COMPARATOR), ("lean4checker", LEAN4CHECKER),
                       ("safe_verify", SAFE_VERIFY)):
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\n{body}")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        paths[name] = path
    return paths
