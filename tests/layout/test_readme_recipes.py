"""Every recipe family the README lists exists for every model it names ("Recipes: `sdpo_`, `grpo_`, ... for each of
`kimina_1_7b` ..."), and each README section the dataset cards and docs point to exists (issue 50, item 7)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def listed_recipes() -> tuple[list[str], list[str]]:
    """(families, models) of the README's "Recipes: ... for each of ..." sentence."""
    (sentence,) = re.findall(r"\nRecipes: (.*?)\.(?:\s|$)", README, flags=re.DOTALL)
    head, _, tail = sentence.partition(" for each of ")
    families = re.findall(r"`([a-z_]+_)`", head)
    models = [m for m in re.findall(r"`([a-z0-9_]+)`", re.sub(r"\([^)]*\)", "", tail)) if not m.endswith("_")]
    return families, models


def test_every_family_the_readme_lists_exists_for_every_model_it_names():
    families, models = listed_recipes()
    assert families == ["sdpo_", "grpo_", "srpo_", "sc_sdpo_"] and "math_qwen3_5_4b" in models and len(models) >= 8
    missing = [f"{family}{model}" for family in families for model in models
               if not (ROOT / "recipes" / "recipe" / f"{family}{model}.yaml").is_file()]
    assert missing == []


def test_every_readme_section_the_cards_and_docs_name_exists():
    headings = set(re.findall(r"^## (.+)$", README, flags=re.MULTILINE))
    named = [(path.relative_to(ROOT), section) for path in [*ROOT.glob("datasets/*.md"), *ROOT.glob("docs/*.md")]
             for section in re.findall(r"README, \"([^\"]+)\"", path.read_text(encoding="utf-8"))]
    assert named and [(p, s) for p, s in named if s not in headings] == []
