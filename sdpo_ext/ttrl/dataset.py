"""verl dataset class (data.custom_cls) that narrows the data to the TTRL problems, by name.

`data.sdpo_ttrl` selects the rows (by `extra_info.name`, never by index):
- nothing set: exactly verl's RLHFDataset (full-dataset training);
- `theorem: NAME`: the one row of that name in `files` (all splits);
- `theorems: [NAME, ...]`: those rows of `files`, in the order given; `theorems: "*"`: every row of `files`
  (set-TTRL on a split). `SDPOTrainer` writes these keys from `sdpo.ttrl` (`ttrl_data_config`); the recipes give
  only `files`.
A name that matches no row fails with the closest names, so a typo never trains on the wrong problem; a name on two
rows fails too. `prompt_batch(names)` collates the rows of the given names (a name may repeat), as verl's
dataloader would collate them, for the set's per-step draw (`sdpo_ext.ttrl.problem_set`).
"""
from __future__ import annotations

import difflib
from typing import Any

from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

EVERY_ROW = "*"


def _row_name(row: dict) -> str | None:
    extra = row.get("extra_info") or {}
    return extra.get("name") if isinstance(extra, dict) else None


def ttrl_data_config(ttrl: Any, data: Any) -> dict[str, Any]:
    """The `data.sdpo_ttrl` block for a TTRL set (`sdpo_ext.config.TTRLConfig`), written from that block alone: the
    recipe's `files` (where names are looked up) for a theorem or a list, the split's own files for `split`."""
    block = {key: value for key, value in dict(data.get("sdpo_ttrl", None) or {}).items()
             if key not in ("theorem", "theorems")}
    if ttrl.split is not None:
        files = data["train_files"] if ttrl.split == "train" else data["val_files"]
        block.update(theorems=EVERY_ROW, files=list(files) if not isinstance(files, str) else [files])
    elif ttrl.theorems is not None:
        block.update(theorems=list(ttrl.theorems))
    elif ttrl.theorem:
        block.update(theorem=ttrl.theorem)
    return block


class TheoremFilterDataset(RLHFDataset):
    """verl's RLHFDataset narrowed to the TTRL problems named in `data.sdpo_ttrl` (module docstring)."""

    def __init__(self, data_files, tokenizer, config, processor=None, max_samples: int = -1):
        ttrl = config.get("sdpo_ttrl", None) or {}
        self.ttrl_theorem = ttrl.get("theorem", None)
        theorems = ttrl.get("theorems", None)
        self.ttrl_theorems = [self.ttrl_theorem] if self.ttrl_theorem else theorems
        if self.ttrl_theorems is not None and not isinstance(self.ttrl_theorems, str):
            self.ttrl_theorems = list(self.ttrl_theorems)
        if self.ttrl_theorems and ttrl.get("files"):
            data_files = list(ttrl["files"])
        super().__init__(data_files, tokenizer, config, processor=processor, max_samples=max_samples)
        self._index = {name: i for i, name in enumerate(self.problem_names())} if self.ttrl_theorems else {}

    def _read_files_and_tokenize(self) -> None:
        super()._read_files_and_tokenize()
        if not self.ttrl_theorems:
            return
        names = [_row_name(row) for row in self.dataframe]
        if self.ttrl_theorems == EVERY_ROW:
            wanted = [n for n in names if n]
            if len(wanted) != len(names):
                raise ValueError(f"error: {names.count(None)} rows of {self.data_files} have no extra_info.name "
                                 f"(set-TTRL on a split needs every problem named)")
        else:
            wanted = self.ttrl_theorems
        keep = []
        for name in wanted:
            rows = [i for i, n in enumerate(names) if n == name]
            if not rows:
                close = difflib.get_close_matches(name, [n for n in names if n], n=5)
                raise ValueError(
                    f"TTRL theorem {name!r} not found in {self.data_files} ({len(names)} rows). Closest names: {close}"
                )
            if len(rows) > 1:
                raise ValueError(f"TTRL theorem {name!r} matches {len(rows)} rows; names must be unique")
            keep.append(rows[0])
        if len(set(keep)) < len(keep):
            raise ValueError(f"error: a TTRL theorem is listed twice in {wanted} (list each once)")
        self.dataframe = self.dataframe.select(keep)

    def problem_names(self) -> list[str]:
        """The problems' names in row order (every row is named in TTRL mode)."""
        return [_row_name(row) for row in self.dataframe]

    def prompt_batch(self, names: list[str]) -> dict[str, Any]:
        """verl's collated batch (`collate_fn`) of the rows named `names`, in that order; a name may repeat."""
        unknown = sorted({n for n in names if n not in self._index})
        if unknown:
            raise ValueError(f"error: {unknown[:5]} are not rows of this dataset ({len(self)} rows)")
        return collate_fn([self[self._index[name]] for name in names])
