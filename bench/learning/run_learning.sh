#!/usr/bin/env bash
# Learning curves of GRPO and the SDPO family on the demo (SmolLM2-135M, addition task), several seeds, all runs
# started together on one GPU so that they share the same conditions.
#
#   bash bench/learning/run_learning.sh launch    # start every run detached (setsid), watch for WATCH_S seconds
#   bash bench/learning/run_learning.sh collect   # (a later call on the same machine) wait for the runs, pack the results
#   bash bench/learning/run_learning.sh all       # both in one call
#
# A device call lasts at most 10 minutes; the runs outlive the call that launched them (new process session), so a
# job longer than one call is one `launch` and one `collect`. RUNS lists "<algo>:<seed>" pairs; each algo maps to a
# recipe plus overrides below. Per run: verl's per-step metrics as JSON lines ($LEARN_DIR/<run>.jsonl, read by
# bench/learning/learning_summary.py), the console log, and the attempt log. `collect` packs them into $OUT/learning.tar.gz
# and writes the summary (learning.json + PNG) into $OUT.
# ATTENTION=fa4_varlen (with GPU_FA4=1 before activate.sh): the path users run, padding removed and the sequences of a
# micro-batch packed under that attention (sdpo_ext.attention), instead of the demo recipe's padded sdpa.
set -uo pipefail
MODE=${1:?usage: run_learning.sh launch|collect|all}
OUT=${OUT:-./bench_out}; mkdir -p "$OUT"
LEARN_DIR=${LEARN_DIR:-/tmp/learning}
STEPS=${STEPS:-16}
RUNS=${RUNS:-"grpo:1 grpo:2 sdpo:1 sdpo:2 sdpo_confident:1 sdpo_confident:2 srpo:1 srpo:2 sc_sdpo:1 sc_sdpo:2"}
RUN_TIMEOUT=${RUN_TIMEOUT:-1500}; WATCH_S=${WATCH_S:-540}; WAIT_S=${WAIT_S:-560}
export SDPO_DEMO_MODEL=${SDPO_DEMO_MODEL:-/tmp/smollm2} SDPO_DEMO_DATA_DIR=${SDPO_DEMO_DATA_DIR:-/tmp/demo_data}
export SDPO_OUTPUT_DIR=$LEARN_DIR/runs

recipe_of() {  # algo -> "+recipe=... [overrides]"
  case $1 in
    grpo) echo "+recipe=grpo_demo" ;;
    sdpo) echo "+recipe=sdpo_demo" ;;
    sdpo_confident) echo "+recipe=sdpo_demo actor_rollout_ref.actor.sdpo.token_weighting=confident" ;;
    sdpo_short_template) echo "+recipe=sdpo_demo" \
      'actor_rollout_ref.actor.sdpo.reprompt.reprompt_template="{prompt}{solution}{feedback}"' ;;  # no last line
    srpo) echo "+recipe=srpo_demo" ;;
    sc_sdpo) echo "+recipe=sc_sdpo_demo" ;;
    *) echo "unknown algo $1" >&2; return 1 ;;
  esac
}

PACKED=()
[ -n "${ATTENTION:-}" ] && PACKED=(actor_rollout_ref.model.use_remove_padding=true
                                   "actor_rollout_ref.model.override_config.attn_implementation=$ATTENTION")

SIDE_BY_SIDE_TOKENS=2048  # 2k-token micro-batches
. "$(dirname "$0")/../common/side_by_side.sh"   # SIDE_BY_SIDE overrides, ISOLATE / ISOLATE_OK, private_tmp
isolate_dir() {  # run name -> its private /tmp, with links to the shared folders the run reads
  private_tmp "$LEARN_DIR/tmp_$1" "$(basename "$SDPO_DEMO_MODEL")" "$(basename "$SDPO_DEMO_DATA_DIR")" \
    "$(basename "$LEARN_DIR")"
}

start_run() {  # "<algo>:<seed>" -> a detached run; its pid is recorded in $LEARN_DIR/<name>.pid and runs.txt
  local algo=${1%%:*} seed=${1##*:}; local name=${algo}_s${seed}
  local prefix=()
  if [ $ISOLATE_OK = 1 ]; then prefix=("${ISOLATE[@]}" "$(isolate_dir "$name")");
  else echo "WARNING: unshare -m refused: $name shares /tmp with the other runs"; fi
  # shellcheck disable=SC2046
  VERL_FILE_LOGGER_PATH=$LEARN_DIR/$name.jsonl setsid nohup timeout "$RUN_TIMEOUT" "${prefix[@]}" \
    python3 -m verl.trainer.main_ppo $(recipe_of "$algo") trainer.total_training_steps=$STEPS \
    data.seed=$seed actor_rollout_ref.rollout.seed=$seed trainer.experiment_name=$name "${SIDE_BY_SIDE[@]}" "${PACKED[@]}" \
    > "$LEARN_DIR/$name.log" 2>&1 < /dev/null &
  echo $! > "$LEARN_DIR/$name.pid"
  echo "$name pid=$! started $(date +%T)" | tee -a "$LEARN_DIR/runs.txt"
}

restart_port_clashes() {
  # Runs side by side share the host's network namespace: torch.distributed's rendezvous port, drawn free by one run,
  # can be taken by another before it binds (EADDRINUSE, seen once in 14 runs). Such a run dies before its first
  # step; start it once more (a later clash is left dead and shows in the summary as a missing seed).
  local run name
  for run in $RUNS; do
    name=${run%%:*}_s${run##*:}
    [ -f "$LEARN_DIR/$name.pid" ] && ! kill -0 "$(cat "$LEARN_DIR/$name.pid")" 2>/dev/null || continue
    [ -s "$LEARN_DIR/$name.jsonl" ] || [ -f "$LEARN_DIR/$name.restarted" ] && continue
    grep -q EADDRINUSE "$LEARN_DIR/$name.log" 2>/dev/null || continue
    mv "$LEARN_DIR/$name.log" "$LEARN_DIR/$name.clash.log"; touch "$LEARN_DIR/$name.restarted"
    echo "$name: rendezvous port clash (EADDRINUSE) before step 0, restarting" | tee -a "$LEARN_DIR/runs.txt"
    start_run "$run"
  done
}

launch() {
  rm -rf "$LEARN_DIR"; mkdir -p "$LEARN_DIR"
  [ -f "$SDPO_DEMO_MODEL/config.json" ] || timeout 180 python3 -m sdpo_data.smollm2 --out-dir "$SDPO_DEMO_MODEL" | tail -1
  python3 -m sdpo_data.addition_rows --out-dir "$SDPO_DEMO_DATA_DIR" | tail -2
  for run in $RUNS; do start_run "$run"; sleep 3; done
  nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv -l 10 > "$LEARN_DIR/nvsmi.csv" 2>&1 &
  local until=$((SECONDS + WATCH_S))
  while [ $SECONDS -lt $until ] && pgrep -f verl.trainer.main_ppo > /dev/null; do sleep 20; progress; done
  pack
}

all() {  # launch and collect in one call; the summary is refreshed every minute so a call cut at its limit keeps it
  WATCH_S=0 launch
  local until=$((SECONDS + WAIT_S)) tick=0
  while [ $SECONDS -lt $until ] && pgrep -f verl.trainer.main_ppo > /dev/null; do
    sleep 20; progress; tick=$((tick + 1)); [ $((tick % 3)) = 0 ] && pack > /dev/null
  done
  pack
}

progress() {  # last step each run logged (and a restart for a run that lost its rendezvous port)
  restart_port_clashes
  local line=""
  for f in "$LEARN_DIR"/*.jsonl; do [ -f "$f" ] && line+="$(basename "$f" .jsonl):$(tail -n 1 "$f" | cut -c1-12 | tr -dc 0-9) "; done
  echo "$(date +%T) steps: $line"
}

pack() {
  free -g | head -2 > "$LEARN_DIR/free.txt"
  for f in "$LEARN_DIR"/*.log; do grep -E "Error|Traceback|Killed|OOM" "$f" | head -5 > "${f%.log}.errors"; done
  for f in "$LEARN_DIR"/*.log; do tail -c 20000 "$f" > "$f.tail"; done
  tar czf "$OUT/learning.tar.gz" -C "$LEARN_DIR" --exclude runs --exclude 'tmp_*' --exclude '*.log' .
  python3 bench/learning/learning_summary.py --dir "$LEARN_DIR" --out "$OUT" --call "${CALL_NOTE:-$(date -u +%F) demo}" --steps "$STEPS" \
    2>&1 | tail -25
}

all_validated() {  # every run logged its validation at the final step (a run that hangs on exit need not be awaited)
  local run
  for run in $RUNS; do
    grep -Eq "^\\{\"step\": ?$STEPS,.*val-core" "$LEARN_DIR/${run%%:*}_s${run##*:}.jsonl" 2>/dev/null || return 1
  done
}

collect() {
  local until=$((SECONDS + WAIT_S))
  while [ $SECONDS -lt $until ] && pgrep -f verl.trainer.main_ppo > /dev/null && ! all_validated; do
    sleep 20; progress
  done
  pgrep -f verl.trainer.main_ppo > /dev/null && echo "runs still going at the deadline"
  cat "$LEARN_DIR/runs.txt"
  pack
}

"$MODE"
