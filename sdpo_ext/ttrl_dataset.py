"""verl dataset class (data.custom_cls) that narrows the data to one theorem, by name, for TTRL.

With `data.sdpo_ttrl.theorem` unset it is exactly verl's RLHFDataset. With a name it reads
`data.sdpo_ttrl.files` (all splits), keeps the single row whose `extra_info.name` matches, and fails with
the closest names when there is none, so a typo never trains on the wrong problem.
"""
from __future__ import annotations

import difflib

from verl.utils.dataset.rl_dataset import RLHFDataset


def _row_name(row: dict) -> str | None:
    extra = row.get("extra_info") or {}
    return extra.get("name") if isinstance(extra, dict) else None


class TheoremFilterDataset(RLHFDataset):
    def __init__(self, data_files, tokenizer, config, processor=None, max_samples: int = -1):
        ttrl = config.get("sdpo_ttrl", None) or {}
        self.ttrl_theorem = ttrl.get("theorem", None)
        if self.ttrl_theorem and ttrl.get("files"):
            data_files = list(ttrl["files"])
        super().__init__(data_files, tokenizer, config, processor=processor, max_samples=max_samples)

    def _read_files_and_tokenize(self) -> None:
        super()._read_files_and_tokenize()
        if not self.ttrl_theorem:
            return
        names = [_row_name(row) for row in self.dataframe]
        keep = [i for i, name in enumerate(names) if name == self.ttrl_theorem]
        if not keep:
            close = difflib.get_close_matches(self.ttrl_theorem, [n for n in names if n], n=5)
            raise ValueError(
                f"TTRL theorem {self.ttrl_theorem!r} not found in {self.data_files} ({len(names)} rows). "
                f"Closest names: {close}"
            )
        if len(keep) > 1:
            raise ValueError(f"TTRL theorem {self.ttrl_theorem!r} matches {len(keep)} rows; names must be unique")
        self.dataframe = self.dataframe.select(keep)
