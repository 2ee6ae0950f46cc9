#!/usr/bin/env bash
# TTRL on the toy Lean set (issue 6 part 3): SmolLM2-135M-Instruct, one theorem per run from the base model,
# stop at the first valid proof, proofs checked by the REPL test double with the set's rules (no Lean).
# Usage (GPU): PROBLEMS=toy_add_7_5,toy_mul_6_7 BUDGET=48 METHODS=sdpo [CONCURRENT=1] bash bench/ttrl/run_ttrl_toy.sh ; -> $OUT
# CONCURRENT=1 starts one discovery sweep per (method, problem) side by side on the one GPU (bench/common/share_gpu.sh),
# so an SDPO run and its GRPO twin fit one device call; their step times then include the contention.
set -uo pipefail
OUT=${OUT:-./bench_out}; mkdir -p "$OUT"
PROBLEMS=${PROBLEMS:-toy_add_7_5,toy_mul_6_7}; BUDGET=${BUDGET:-48}; METHODS=${METHODS:-sdpo}; RUN_TIMEOUT=${RUN_TIMEOUT:-420}
export SDPO_DEMO_MODEL=${SDPO_DEMO_MODEL:-/tmp/smollm2} SDPO_TOY_DATA_DIR=${SDPO_TOY_DATA_DIR:-/tmp/toy}
RUNS=${RUNS:-/tmp/ttrl_toy}
[ -f "$SDPO_DEMO_MODEL/config.json" ] || timeout 180 python3 -m sdpo_data.smollm2 --out-dir "$SDPO_DEMO_MODEL" 2>&1 | tail -1
python3 -m sdpo_data.toy_lean --out-dir "$SDPO_TOY_DATA_DIR" | tail -1
. "$(dirname "$0")/../common/share_gpu.sh"  # sets CONCURRENT and, when it is 1, the shared-GPU overrides `share`
sweep() {  # one discovery sweep over the given methods and problems
  local start; start=$(date +%s)
  timeout "$RUN_TIMEOUT" python3 -m sdpo_eval.discovery run --recipe sdpo_toy_lean --problems "$2" --budget "$BUDGET" \
    --methods "$1" --out-dir "$RUNS" -- trainer.n_gpus_per_node=1 "${share[@]}"
  echo "discovery $1 $2 rc=$? wall=$(( $(date +%s) - start ))s"
}
if [ "$CONCURRENT" = 1 ]; then
  for method in ${METHODS//,/ }; do
    for problem in ${PROBLEMS//,/ }; do sweep "$method" "$problem" & sleep 15; done
  done
  wait
else
  sweep "$METHODS" "$PROBLEMS"
fi
# flat copies (only files two folders below $OUT come back from the device, at most 8 per call), also of runs
# that failed early: per run its attempt log, verl's step lines, its status (command, return code, wall time)
# and the last 200 lines of its stdout
for status in "$RUNS"/*/*/stdout.log; do
  [ -f "$status" ] || continue
  dir=$(dirname "$status"); run=$(basename "$dir"); method=$(basename "$(dirname "$dir")")
  prefix="$OUT/ttrl_${method}_${run}"
  cp "$dir/attempts.jsonl" "${prefix}_attempts.jsonl" 2>/dev/null || echo "$method $run: no attempt log"
  grep -E "step:[0-9]+ " "$status" | sed 's/\x1b\[[0-9;]*m//g' > "${prefix}_metrics.log"
  cp "$dir/status.json" "${prefix}_status.json" 2>/dev/null || echo "$method $run: no status (cut by RUN_TIMEOUT?)"
  tail -n 200 "$status" | sed 's/\x1b\[[0-9;]*m//g' > "${prefix}_tail.log"
  grep -E "TTRL:|Traceback|Error" "$status" | grep -v Warning | head -3
done
