"""Git trees of Lean sources for the table generators' tests (make_tables, make_tactics): a commit of given files,
and a Mathlib-shaped one with its lake manifest and toolchain."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path


def git_tree(path: Path, files: dict[str, str]) -> str:
    """A git repository at `path` holding `files` ({relative path: text}) in one commit; returns the commit."""
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True)
    subprocess.run(["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
                   check=True)
    return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def mathlib_tree(path: Path, modules: dict[str, str], packages: list[dict[str, str]] | None = None) -> str:
    """`git_tree` of `modules` plus lake-manifest.json (`packages`) and a Lean v4.9.0 lean-toolchain."""
    return git_tree(path, {**modules, "lake-manifest.json": json.dumps({"packages": packages or []}),
                           "lean-toolchain": "leanprover/lean4:v4.9.0\n"})


def source_flags(tmp_path: Path, commit: str, core_text: str) -> list[str]:
    """The generators' `--mathlib/--commit/--core` flags for the tree at tmp_path/mathlib, with a core list."""
    core = tmp_path / "core.txt"
    core.write_text(core_text, encoding="utf-8")
    return ["--mathlib", str(tmp_path / "mathlib" / ".git"), "--commit", commit, "--core", str(core)]
