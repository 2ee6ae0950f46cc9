# Sourced by the bench runners when several verl runs share one GPU (CONCURRENT=1): Hydra overrides that let
# them start side by side. Each vLLM engine gets a fixed KV cache instead of profiling for one: vLLM's profiling
# asserts that free GPU memory did not grow while it ran, which fails whenever another run's vLLM goes to sleep
# in that window. gpu_memory_utilization is then only vLLM's start-up check of free memory.
# A 135M model's KV cache is ~23 KB per token: 4 GB hold ~170k tokens, > 16 prompts x 8 x (128 + 128).
SHARE_GPU_OVERRIDES=(actor_rollout_ref.rollout.gpu_memory_utilization=0.1
                     +actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes=4000000000)
