#!/usr/bin/env bash
# SDPO vs GRPO on the no-download demo (SmolLM2-135M-Instruct, addition task), same seed and budget.
# Usage (GPU): STEPS=15 ALGOS="sdpo grpo" [CONCURRENT=1] bash bench/learning/run_demo.sh [extra Hydra overrides...]
# CONCURRENT=1 starts the runs side by side on the one GPU (bench/common/share_gpu.sh): both fit a single device call,
# but their step times then include contention for the GPU and CPUs.
# Logs, attempt logs and verl's per-step metrics (<algo>_metrics.log, read by plot_demo.py) go to $OUT
# (or ./bench_out).
set -uo pipefail
OUT=${OUT:-./bench_out}; mkdir -p "$OUT"
STEPS=${STEPS:-15}; ALGOS=${ALGOS:-"sdpo grpo"}; RUN_TIMEOUT=${RUN_TIMEOUT:-280}
export SDPO_DEMO_MODEL=${SDPO_DEMO_MODEL:-/tmp/smollm2} SDPO_DEMO_DATA_DIR=${SDPO_DEMO_DATA_DIR:-/tmp/demo_data}
export SDPO_OUTPUT_DIR=${SDPO_OUTPUT_DIR:-/tmp/sdpo_runs}
[ -f "$SDPO_DEMO_MODEL/config.json" ] || timeout 180 python3 -m sdpo_data.smollm2 --out-dir "$SDPO_DEMO_MODEL" 2>&1 | tail -2
python3 -m sdpo_data.addition_rows --out-dir "$SDPO_DEMO_DATA_DIR" | tail -2
. "$(dirname "$0")/../common/share_gpu.sh"  # sets CONCURRENT and, when it is 1, the shared-GPU overrides `share`

run_one() {  # one algorithm's run, its wall time and its flat result files in $OUT
  local algo=$1; shift
  rm -rf "$SDPO_OUTPUT_DIR/${algo}_demo"
  local start; start=$(date +%s)
  timeout "$RUN_TIMEOUT" python3 -m verl.trainer.main_ppo +recipe=${algo}_demo trainer.total_training_steps=$STEPS \
    "${share[@]}" "$@" > "$OUT/${algo}_demo.log" 2>&1
  echo "$algo rc=$? wall=$(( $(date +%s) - start ))s"
  cp "$SDPO_OUTPUT_DIR/${algo}_demo/attempts.jsonl" "$OUT/${algo}_attempts.jsonl" 2>/dev/null || echo "no attempt log for $algo"
  grep -E "step:[0-9]+ " "$OUT/${algo}_demo.log" | sed 's/\x1b\[[0-9;]*m//g' > "$OUT/${algo}_metrics.log"
  tail -n 1 "$OUT/${algo}_metrics.log" | cut -c1-800
  grep -E "Error|Traceback" "$OUT/${algo}_demo.log" | head -5
}

for algo in $ALGOS; do
  if [ "$CONCURRENT" = 1 ]; then run_one "$algo" "$@" & sleep 15; else run_one "$algo" "$@"; fi
done
wait
