#!/usr/bin/env bash
# Step time and memory per algorithm (issue 18): Qwen3-1.7B-shaped random model, ~1k-token prompts, RESPONSE_LEN-token
# responses, rollout n=8, 8 prompts, the Lean reward on the REPL test double. Same recipes as real runs.
# Usage (GPU): RESPONSE_LEN=2048 STEPS=4 bash bench/step_time/run_step_time.sh ; per algorithm: log, command, nvidia-smi memory
# samples -> $OUT/r$RESPONSE_LEN. ALGOS (run one after another, so each has the GPU to itself):
#   grpo        GRPO as the recipes run it;
#   grpo_fused  GRPO with verl's fused log-prob kernels (actor_rollout_ref.model.use_fused_kernels), its fastest
#               setting if they run on the device; SDPO cannot use them (its loss needs the logits);
#   sdpo, srpo  the SDPO family.
# Summarise one length's sdpo and grpo runs with bench/step_time/plot_step_time.py --runs $OUT/r$RESPONSE_LEN. Budget: each run
# needs about 300 s before its first step, so four algorithms x two lengths do not fit one session's 30 device
# minutes; bench/step_time/run_step_phases.sh measures the same comparison in one session.
# With random weights every output is truncated text, so the screen decides before the REPL is reached; the
# teacher still gets the truncation feedback, so the SDPO teacher path runs for every sample.
set -uo pipefail
RESPONSE_LEN=${RESPONSE_LEN:-2048}
OUT=${OUT:-./bench_out}/r$RESPONSE_LEN; mkdir -p "$OUT"
STEPS=${STEPS:-4}; RUN_TIMEOUT=${RUN_TIMEOUT:-480}
MODEL=${MODEL:-/tmp/qwen3_1p7b_random}; export SDPO_DATA_DIR=${SDPO_DATA_DIR:-/tmp/step_data}
export SDPO_OUTPUT_DIR=${SDPO_OUTPUT_DIR:-/tmp/sdpo_runs}
# DRY_RUN=1: write each run's command and stop (a CPU test composes them with Hydra before GPU time is spent).
[ "${DRY_RUN:-0}" = 1 ] || python3 bench/step_time/make_step_time_inputs.py --model-dir "$MODEL" --data-dir "$SDPO_DATA_DIR" | tail -1
for algo in ${ALGOS:-grpo_fused sdpo srpo}; do
  extra=()
  case $algo in
    grpo_fused) recipe=grpo_kimina_1_7b; extra=(actor_rollout_ref.model.use_fused_kernels=true) ;;
    grpo|sdpo|srpo) recipe=${algo}_kimina_1_7b ;;
    *) echo "unknown algo $algo" >&2; exit 2 ;;
  esac
  args=(+recipe=$recipe "${extra[@]}"
    actor_rollout_ref.model.path="$MODEL" actor_rollout_ref.model.use_remove_padding=false
    +actor_rollout_ref.model.override_config.attn_implementation=sdpa
    data.max_prompt_length=1100 data.max_response_length=$RESPONSE_LEN data.train_batch_size=8 sdpo.full_batch_size=8
    actor_rollout_ref.rollout.n=8 actor_rollout_ref.rollout.gpu_memory_utilization=0.4
    reward.custom_reward_function.reward_kwargs.backend=repl
    "+reward.custom_reward_function.reward_kwargs.repl_command=python3 -m lean_env.testing.fake_repl --import-delay 5 --proof-delay 0.2"
    trainer.total_training_steps=$STEPS trainer.save_freq=-1 trainer.test_freq=-1 trainer.n_gpus_per_node=1
    trainer.experiment_name="step_time_${algo}_r$RESPONSE_LEN" "$@")
  { printf 'python3 -m verl.trainer.main_ppo'; printf " '%s'" "${args[@]}"; echo; } > "$OUT/${algo}_command.txt"
  [ "${DRY_RUN:-0}" = 1 ] && continue
  # whole-GPU memory (MiB) every 0.5 s while the run lasts
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 > "$OUT/${algo}_smi.csv" 2>/dev/null &
  smi=$!
  start=$(date +%s)
  timeout "$RUN_TIMEOUT" python3 -m verl.trainer.main_ppo "${args[@]}" > "$OUT/${algo}_step.log" 2>&1
  echo "$algo rc=$? wall=$(( $(date +%s) - start ))s"
  kill $smi 2>/dev/null
  grep -E "step:[0-9]+ " "$OUT/${algo}_step.log" | sed 's/\x1b\[[0-9;]*m//g' > "$OUT/${algo}_metrics.log"
  cp "$SDPO_OUTPUT_DIR/step_time_${algo}_r$RESPONSE_LEN/attempts.jsonl" "$OUT/${algo}_attempts.jsonl" 2>/dev/null || true
  grep -E "Error|Traceback" "$OUT/${algo}_step.log" | head -5
  grep -oE "timing_s/(step|gen|old_log_prob|update_actor|update_weights|sdpo_prepare|sdpo_ema_update):[0-9.]+|actor/timing_s/sdpo_teacher_forward:[0-9.]+" "$OUT/${algo}_metrics.log" | tr '\n' ' '; echo
done
