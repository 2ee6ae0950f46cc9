# Sourced by the bench runners: with CONCURRENT=1 (several verl runs sharing one GPU) it sets `share` to Hydra
# overrides that let them start side by side, else to nothing. Each vLLM engine gets a fixed KV cache instead of
# profiling for one: vLLM's profiling asserts that free GPU memory did not grow while it ran, which fails whenever
# another run's vLLM goes to sleep in that window. gpu_memory_utilization is then only vLLM's start-up check of
# free memory. A 135M model's KV cache is ~23 KB per token: 4 GB hold ~170k tokens, more than a demo step
# (16 prompts x 8 x (128 + 128)) or a toy TTRL step (16 x (512 + 256)) needs.
SHARE_GPU_OVERRIDES=(actor_rollout_ref.rollout.gpu_memory_utilization=0.1
                     +actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes=4000000000)
CONCURRENT=${CONCURRENT:-0}; share=()
if [ "$CONCURRENT" = 1 ]; then share=("${SHARE_GPU_OVERRIDES[@]}"); fi
