# Sourced by the runners that start several verl runs side by side on one GPU and host (bench/learning/run_learning.sh;
# the discovery job keeps the same overrides in sdpo_eval/discovery/launcher.py, SIDE_BY_SIDE). Set SIDE_BY_SIDE_TOKENS,
# each run's dynamic-batch token cap, before sourcing.
#
# SIDE_BY_SIDE: Hydra overrides that let the runs share the GPU: a fixed 2 GB vLLM KV cache each
# (bench/common/share_gpu.sh explains why it is fixed) for a context of prompt + response (not the model's own), small
# token caps, one agent-loop and one reward worker, one
# TransferQueue storage unit (ten runs shared one H200 and 16 CPU cores this way: bench/learning/README.md).
SIDE_BY_SIDE=(actor_rollout_ref.rollout.gpu_memory_utilization=0.05
              +actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes=2000000000
              "actor_rollout_ref.rollout.max_model_len='\${sdpo.sequence_tokens:\${data.max_prompt_length},\${data.max_response_length}}'"
              "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${SIDE_BY_SIDE_TOKENS:?set the token cap first}"
              "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=$SIDE_BY_SIDE_TOKENS"
              "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=$SIDE_BY_SIDE_TOKENS"
              actor_rollout_ref.rollout.agent.num_workers=1 reward.num_workers=1
              transfer_queue.backend.SimpleStorage.num_data_storage_units=1)

# Every run starts its own Ray cluster, whose first job id is always 01000000, and verl 0.9.1 names its
# trainer-to-vLLM weight-sync socket /tmp/rl-colocate-zmq-<ray job id>-replica-<r>-rank-<k>.sock: runs on one host
# share that path. Runs side by side then hang (GPU idle, no error) or fail in vLLM's collective_rpc. Each run
# therefore gets a private /tmp (a mount namespace, "${ISOLATE[@]}" <private dir> <command...>; the shared folders
# it needs are reached through symlinks, private_tmp).
ISOLATE=(unshare -m --propagation private sh -c \
  'mkdir -p /mnt/host_tmp && mount --bind /tmp /mnt/host_tmp && mount --bind "$0" /tmp && exec "$@"')
ISOLATE_OK=0; unshare -m true 2>/dev/null && ISOLATE_OK=1

private_tmp() {  # <private dir> <folders under /tmp the run reads...> -> the private dir, linked to them
  local priv=$1; shift
  # torch's inductor cache too, so that the runs reuse one another's compiled kernels: start-up took 6.9 min with it
  # private and 3 min when all runs shared /tmp (suspected cause, not shown).
  mkdir -p "$priv" "/tmp/torchinductor_$(id -un)"
  for d in gpu-site gpu-project "torchinductor_$(id -un)" "$@"; do ln -sfn "/mnt/host_tmp/$d" "$priv/$d"; done
  echo "$priv"
}
