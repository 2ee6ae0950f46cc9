#!/usr/bin/env bash
# Set-TTRL discovery against best-of-k on one GPU (issue 32 part 3): SmolLM2-135M-Instruct, the hard end of the demo's
# addition task and the toy Lean theorems, every method and seed, one job.
#
#   bash bench/ttrl/run_ttrl_discovery.sh launch    # start the whole job detached, watch for WATCH_S seconds
#   bash bench/ttrl/run_ttrl_discovery.sh collect   # (a later call on the same machine) wait up to WAIT_S, pack into $OUT
#   bash bench/ttrl/run_ttrl_discovery.sh job       # the job in the foreground (what `launch` starts)
#   CHUNK=<k> T0=$(date +%s) bash bench/ttrl/run_ttrl_discovery.sh chunk   # one device call's share, in the foreground
#       (bench/ttrl/discovery_chunks.py): chunk 0 = base rates and the problem choice ($OUT/problems.json, to commit
#       as bench/ttrl/problems.json); chunk k >= 1 = its runs on the committed problems, side by side, each cut at
#       T0 + CALL_S (540) - 60 s; then $OUT/ttrl_discovery_raw.tar.gz with chunk.json. Merge chunks from any calls:
#       discovery_chunks.py merge, then ttrl_discovery.py report --run-dir <merged>/runs --coverage <merged>/coverage.json
#
# The job: (1) base rates: per task one best-of-k set run over the candidates (stop_on_success=false, BASE_SAMPLES
# attempts each, the trained runs' sampler); (2) the problems: those with a base rate <= MAX_RATE, rarest first
# (PER_TASK per task); (3) per task, method and seed one set-TTRL run over them with BUDGET attempts per problem
# (sdpo_eval.discovery_set: best_of_k is the GRPO run without actor updates), MAX_PARALLEL at once on the GPU;
# (4) bench/ttrl/ttrl_discovery.py report -> $OUT/ttrl_discovery.{json,png,md}: the JSON and PNG go to
# bench/ttrl/results/, the first-success table (.md) into bench/ttrl/README.md (results/ keeps JSON and PNG only).
# Size (defaults): 2 base-rate runs, then 2 tasks x 6 methods x 2 seeds = 24 runs, 10 at a time
# (bench/learning/run_learning.sh ran 10 demo runs side by side on one H200); a demo set run is <= 32 steps of
# 8 prompts x 8 samples. Wall time not
# measured: an estimate of 35-45 minutes, i.e. one `launch` and four or five `collect` calls.
# A device call lasts at most 10 minutes; the job outlives the call that launched it (new process session), so it
# is one `launch` and as many `collect` calls as it needs. `collect` always packs what is there: a report made
# before every run finished lists each run's status under "runs" (null: still running or cut).
set -uo pipefail
MODE=${1:?usage: run_ttrl_discovery.sh launch|collect|job|chunk}
OUT=${OUT:-./bench_out}; mkdir -p "$OUT"
DISC_DIR=${DISC_DIR:-/tmp/ttrl_discovery}
TASKS=${TASKS:-"demo toy_lean"}; SEEDS=${SEEDS:-"1 2"}
METHODS=${METHODS:-"best_of_k grpo sdpo sdpo_confident srpo sc_sdpo"}
BUDGET=${BUDGET:-128}; BASE_SAMPLES=${BASE_SAMPLES:-64}; MAX_RATE=${MAX_RATE:-0.1}; PER_TASK=${PER_TASK:-16}
CANDIDATES=${CANDIDATES:-48}  # addition problems whose base rate is measured (the toy set has 8)
BASE_PROMPTS=${BASE_PROMPTS:-48}  # prompts per step of the base-rate runs (sampling only: larger steps, fewer of them)
PROMPTS=${PROMPTS:-8}; N=${N:-8}  # prompts per step and samples per prompt, the same for every task and method
MAX_PARALLEL=${MAX_PARALLEL:-10}; RUN_TIMEOUT=${RUN_TIMEOUT:-3000}; WATCH_S=${WATCH_S:-540}; WAIT_S=${WAIT_S:-560}
export SDPO_DEMO_MODEL=${SDPO_DEMO_MODEL:-/tmp/smollm2} SDPO_DEMO_DATA_DIR=${SDPO_DEMO_DATA_DIR:-/tmp/demo_data}
export SDPO_TOY_DATA_DIR=${SDPO_TOY_DATA_DIR:-/tmp/toy}

# Runs share the one GPU and its host (bench/common/side_by_side.sh): 4k-token micro-batches, plus the job's batch shape.
SIDE_BY_SIDE_TOKENS=4096
. "$(dirname "$0")/../common/side_by_side.sh"   # SIDE_BY_SIDE overrides, ISOLATE / ISOLATE_OK, private_tmp
SHARED=("${SIDE_BY_SIDE[@]}" data.train_batch_size=$PROMPTS actor_rollout_ref.rollout.n=$N
        data.dataloader_num_workers=0 trainer.n_gpus_per_node=1)
run_tmp() {  # run name -> its private /tmp, with links to the shared folders a run reads
  private_tmp "$DISC_DIR/tmp/$1" "$(basename "$SDPO_DEMO_MODEL")" "$(basename "$SDPO_DEMO_DATA_DIR")" \
    "$(basename "$SDPO_TOY_DATA_DIR")" "$(basename "$DISC_DIR")"
}

start_run() {  # <run dir> <task> <method> <seed> <problems> <budget> [--keep-going [overrides...]] -> a background run
  local dir=$1 task=$2 method=$3 seed=$4 problems=$5 budget=$6 keep=${7:-}; shift 7 2>/dev/null || shift $#
  [ -f "$dir/status.json" ] && grep -q '"returncode": 0' "$dir/status.json" && return 0  # finished earlier
  mkdir -p "$dir"
  local name; name=$(echo "${dir#"$DISC_DIR"/}" | tr / _)
  local prefix=(); [ $ISOLATE_OK = 1 ] && prefix=("${ISOLATE[@]}" "$(run_tmp "$name")")
  local cmd; cmd=$(python3 bench/ttrl/ttrl_discovery.py command --task "$task" --method "$method" --seed "$seed" \
    --problems "$problems" --budget "$budget" --run-dir "$dir" $keep -- "${SHARED[@]}" "$@")
  echo "$cmd" > "$dir/command.txt"
  (start=$(date +%s)
   # verl's file logger: every step's metrics (sdpo_lean/ttrl_* among them) as JSON lines
   VERL_FILE_LOGGER_PATH=$dir/metrics.jsonl eval timeout "$RUN_TIMEOUT" "${prefix[*]@Q}" "$cmd" \
     > "$dir/stdout.log" 2>&1 < /dev/null
   rc=$?
   echo "{\"returncode\": $rc, \"wall_s\": $(( $(date +%s) - start ))}" > "$dir/status.json"
   echo "$(date +%T) $name rc=$rc wall=$(( $(date +%s) - start ))s" >> "$DISC_DIR/runs.txt") &
  echo "$(date +%T) $name started" >> "$DISC_DIR/runs.txt"
}

wait_for_slot() { while [ "$(jobs -rp | wc -l)" -ge "$MAX_PARALLEL" ]; do sleep 10; done; }

job() {
  mkdir -p "$DISC_DIR"
  [ -f "$SDPO_DEMO_MODEL/config.json" ] || timeout 180 python3 -m sdpo_data.smollm2 --out-dir "$SDPO_DEMO_MODEL" | tail -1
  python3 -m sdpo_data.addition_rows --out-dir "$SDPO_DEMO_DATA_DIR" | tail -1
  python3 -m sdpo_data.toy_lean --out-dir "$SDPO_TOY_DATA_DIR" | tail -1
  echo "$(date +%T) base rates" >> "$DISC_DIR/runs.txt"
  for task in $TASKS; do
    start_run "$DISC_DIR/base/$task" "$task" best_of_k 0 \
      "$(python3 bench/ttrl/ttrl_discovery.py candidates --task "$task" --data-dir "$SDPO_DEMO_DATA_DIR" \
         --count "$CANDIDATES")" "$BASE_SAMPLES" --keep-going "data.train_batch_size=$BASE_PROMPTS"
    sleep 5
  done
  wait
  local task method seed problems ready=""
  for task in $TASKS; do
    python3 bench/ttrl/ttrl_discovery.py select --log "$DISC_DIR/base/$task/attempts.jsonl" --samples "$BASE_SAMPLES" \
      --max-rate "$MAX_RATE" --count "$PER_TASK" --out "$DISC_DIR/base/$task/base_rate.json" \
      > "$DISC_DIR/problems_$task.txt"
    if [ -s "$DISC_DIR/problems_$task.txt" ]; then ready+=" $task"
    else echo "$(date +%T) $task: no problem measured at base rate <= $MAX_RATE (see base/$task)" >> "$DISC_DIR/runs.txt"
    fi
    echo "$(date +%T) $task problems: $(cat "$DISC_DIR/problems_$task.txt")" >> "$DISC_DIR/runs.txt"
  done
  local total; total=$(cat "$DISC_DIR"/problems_*.txt | tr , '\n' | grep -c .)
  echo "$(date +%T) $total problems in all (issue 32 asks for at least 16)" >> "$DISC_DIR/runs.txt"
  for seed in $SEEDS; do for method in $METHODS; do for task in $ready; do
    problems=$(cat "$DISC_DIR/problems_$task.txt")
    wait_for_slot
    start_run "$DISC_DIR/runs/$task/$method/seed$seed" "$task" "$method" "$seed" "$problems" "$BUDGET"
    sleep 5
  done; done; done
  wait
  echo "$(date +%T) all runs ended" >> "$DISC_DIR/runs.txt"
  pack
}

pack() {  # the report from whatever runs exist, plus a tarball of their logs (attempt logs, commands, status, tails)
  local base=(); for f in "$DISC_DIR"/base/*/base_rate.json; do [ -f "$f" ] && base+=(--base-rate "$f"); done
  [ -d "$DISC_DIR/runs" ] && python3 bench/ttrl/ttrl_discovery.py report --run-dir "$DISC_DIR/runs" --budget "$BUDGET" \
    "${base[@]}" --call "${CALL_NOTE:-$(date -u +%F) one GPU, bench/ttrl/run_ttrl_discovery.sh}" \
    --out "$OUT/ttrl_discovery" 2>&1 | tail -8
  for f in "$DISC_DIR"/{base,runs}/*/stdout.log "$DISC_DIR"/runs/*/*/*/stdout.log; do
    [ -f "$f" ] && tail -c 20000 "$f" | sed 's/\x1b\[[0-9;]*m//g' > "${f%.log}.tail"; done
  tar czf "$OUT/ttrl_discovery_raw.tar.gz" -C "$DISC_DIR" --exclude tmp --exclude checkpoints --exclude stdout.log \
    runs.txt $(cd "$DISC_DIR" && ls -d base runs problems_*.txt chunk.json 2>/dev/null)
  cp "$DISC_DIR/runs.txt" "$OUT/ttrl_discovery_runs.txt" 2>/dev/null
}

chunk() {  # one call, in the foreground, from a copy of bench/ outside the call's folder (removed when it returns)
  : "${CHUNK:?set CHUNK}" "${T0:?set T0 to the start of the call in epoch seconds}"
  local deadline=$(( T0 + ${CALL_S:-540} - 60 )) src=$DISC_DIR/src
  rm -rf "$DISC_DIR"; mkdir -p "$src" && cp -r bench "$src/" && cd "$src" || exit 1
  [ -f "$SDPO_DEMO_MODEL/config.json" ] || timeout 180 python3 -m sdpo_data.smollm2 --out-dir "$SDPO_DEMO_MODEL" | tail -1
  python3 -m sdpo_data.addition_rows --out-dir "$SDPO_DEMO_DATA_DIR" | tail -1
  python3 -m sdpo_data.toy_lean --out-dir "$SDPO_TOY_DATA_DIR" | tail -1
  RUN_TIMEOUT=$(( deadline - $(date +%s) )); MAX_PARALLEL=16
  local task method seed problems
  if [ "$CHUNK" = 0 ]; then
    for task in $TASKS; do
      start_run "$DISC_DIR/base/$task" "$task" best_of_k 0 \
        "$(python3 bench/ttrl/ttrl_discovery.py candidates --task "$task" --data-dir "$SDPO_DEMO_DATA_DIR" \
           --count "$CANDIDATES")" "$BASE_SAMPLES" --keep-going "data.train_batch_size=$BASE_PROMPTS"
    done
    wait
    python3 bench/ttrl/ttrl_discovery.py problems --budget "$BUDGET" --samples "$BASE_SAMPLES" --max-rate "$MAX_RATE" \
      --count "$PER_TASK" --base-dir "$DISC_DIR/base" --out "$OUT/problems.json"
  else
    while read -r task method seed; do
      problems=$(python3 -c "import json,sys; print(','.join(json.load(open(sys.argv[1]))['problems'][sys.argv[2]]))" \
        bench/ttrl/problems.json "$task") || exit 1
      start_run "$DISC_DIR/runs/$task/$method/seed$seed" "$task" "$method" "$seed" "$problems" "$BUDGET"
      sleep 2
    done < <(python3 bench/ttrl/discovery_chunks.py plan --chunk "$CHUNK")
    wait
  fi
  python3 -c "import json,sys; json.dump({'chunk': int(sys.argv[1]), 'budget': int(sys.argv[2]), 'call': sys.argv[3],
    'problems': json.load(open('bench/ttrl/problems.json'))['problems'] if sys.argv[1] != '0' else {}},
    open(sys.argv[4], 'w'))" "$CHUNK" "$BUDGET" "${CALL_NOTE:-$(date -u +%FT%TZ) chunk $CHUNK}" "$DISC_DIR/chunk.json"
  tail -n 20 "$DISC_DIR/runs.txt"
  pack
  cp "$DISC_DIR/chunk.json" "$OUT/"
}

launch() {
  rm -rf "$DISC_DIR"; mkdir -p "$DISC_DIR"
  setsid nohup bash "$0" job > "$DISC_DIR/job.log" 2>&1 < /dev/null &
  echo $! > "$DISC_DIR/job.pid"
  WAIT_S=$WATCH_S collect
}

collect() {
  local until=$((SECONDS + WAIT_S))
  while [ $SECONDS -lt $until ] && kill -0 "$(cat "$DISC_DIR/job.pid")" 2>/dev/null; do sleep 30; done
  kill -0 "$(cat "$DISC_DIR/job.pid")" 2>/dev/null && echo "job still running at $(date +%T)"
  tail -n 40 "$DISC_DIR/runs.txt"; tail -n 5 "$DISC_DIR/job.log"
  pack
}

"$MODE"
