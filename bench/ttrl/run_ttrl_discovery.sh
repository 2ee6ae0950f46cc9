#!/usr/bin/env bash
# Set-TTRL discovery on one GPU (issue 47): SmolLM2-135M-Instruct on the hard end of the demo's addition task and the
# toy Lean theorems; best-of-k and the feedback re-prompting baseline `reprompt` (sdpo_eval.discovery_sampler, no
# update) against GRPO, sdpo_confident and SRPO (set-TTRL verl runs), every method on every seed, one job.
#
#   bash bench/ttrl/run_ttrl_discovery.sh launch    # start the job detached (new process session), watch WATCH_S s
#   bash bench/ttrl/run_ttrl_discovery.sh collect   # a later call on the same machine: wait up to WAIT_S, pack $OUT
#   bash bench/ttrl/run_ttrl_discovery.sh job       # the job in the foreground (what `launch` starts)
#
# The job: (1) base rates: per task the sampler draws BASE_SAMPLES attempts for each candidate with the recipe's own
# sampler and reward (best_of_k, --keep-going; the two tasks at once); (2) the problems: base rate <= MAX_RATE
# (default 0: no success in the base samples), rarest first, at most PER_TASK per task; (3) the trained methods
# (TRAINED) x SEEDS as set-TTRL verl runs, as many at once as the GPU memory holds at PER_RUN_GB each; odd seeds start
# as before, even seeds with CUT_OVERRIDES (the start-up cut), so the start-up table compares the two under the same
# load (bench/ttrl/startup_table.py reads each run's launch.json and phase marks); (4) the sampling baselines
# (SAMPLED) beside them, one process per task; (5) `pack`: the report ($OUT/ttrl_discovery.{json,png,md}, partial runs
# included: the report says up to which k every compared method reached), the start-up table and a tarball of logs.
# A run cut by the machine's end still counts with every attempt it judged; a later `job` on the same machine
# resumes a verl run from its last checkpoint (every SAVE_FREQ steps) with its attempt log, and skips finished runs.
# PROBLEMS_<task>=a,b,... (an earlier call's choice) skips that task's base rates: a fresh machine runs the same problems.
set -uo pipefail
MODE=${1:?usage: run_ttrl_discovery.sh launch|collect|job|probe}
OUT=${OUT:-./bench_out}; mkdir -p "$OUT"
DISC_DIR=${DISC_DIR:-/tmp/ttrl_discovery}
TASKS=${TASKS:-"demo toy_lean"}; SEEDS=${SEEDS:-"1 2"}
TRAINED=${TRAINED:-"grpo sdpo_confident srpo"}
SAMPLED=${SAMPLED:-"best_of_k:1,reprompt:1,best_of_k:2,reprompt:2"}
BUDGET=${BUDGET:-128}; BASE_SAMPLES=${BASE_SAMPLES:-64}; MAX_RATE=${MAX_RATE:-0}; PER_TASK=${PER_TASK:-16}
CANDIDATES=${CANDIDATES:-256}  # addition problems whose base rate is measured (the toy set has 8)
# the demo's operands go to DEMO_MAX_OPERAND: at 30 (the demo's own task) the hardest 96 sums had a per-sample rate
# near 1 % (8 of them no success in 64 on the H100, 2026-12-06), which best-of-k finds; larger sums (not measured
# yet: the base rates of the next run decide) are meant to be what sampling alone does not solve
DEMO_MAX_OPERAND=${DEMO_MAX_OPERAND:-100}
N=${N:-8}  # samples per prompt; prompts per step: the recipe's (every open problem, at most 16)
PER_RUN_GB=${PER_RUN_GB:-11}  # verl runs at once: by GPU memory at PER_RUN_GB each, at most MAX_PARALLEL if set
SAVE_FREQ=${SAVE_FREQ:-8}; SAMPLER_KV=${SAMPLER_KV:-2000000000}
SAMPLER_BACKEND=${SAMPLER_BACKEND:-vllm}  # transformers: a CPU dry run of the job (TRAINED="")
RUN_TIMEOUT=${RUN_TIMEOUT:-3000}; WATCH_S=${WATCH_S:-540}; WAIT_S=${WAIT_S:-560}
export SDPO_DEMO_MODEL=${SDPO_DEMO_MODEL:-/tmp/smollm2} SDPO_DEMO_DATA_DIR=${SDPO_DEMO_DATA_DIR:-/tmp/demo_data}
export SDPO_TOY_DATA_DIR=${SDPO_TOY_DATA_DIR:-/tmp/toy}
# The start-up cut: no Ray dashboard (its processes start with every run), and Ray sized to what a run places
# (sdpo_ext/startup/small_host.py: 3 + 1 + 1 + 1 CPUs) so it prestarts 8 idle workers, not one per host CPU.
# CUT_EXTRA: further start-up switches for the cut runs (word-split; bench/ttrl/README.md, start-up: to measure)
# shellcheck disable=SC2206
CUT_OVERRIDES=(+ray_kwargs.ray_init.include_dashboard=false ray_kwargs.ray_init.num_cpus=8 ${CUT_EXTRA:-})

# Runs share the one GPU and its host (bench/common/side_by_side.sh): 4k-token micro-batches, plus the job's batch shape.
SIDE_BY_SIDE_TOKENS=4096
. "$(dirname "$0")/../common/side_by_side.sh"   # SIDE_BY_SIDE overrides, ISOLATE / ISOLATE_OK, private_tmp
# free_cache_engine=False: vLLM never sleeps between rollouts. Its sleep asserts that the GPU's free memory grew
# ("Memory usage increased after sleeping"), which other runs allocating on the same card can break: it ended SRPO
# seed 4 at step 4 on 2026-12-06. Awake, a run keeps its 2 GB KV cache and the model's weights during the update
# (verl 0.9.1 then syncs weights without resuming them: engine_workers.update_weights); not yet run on a GPU.
SHARED=("${SIDE_BY_SIDE[@]}" actor_rollout_ref.rollout.n=$N data.dataloader_num_workers=0 trainer.n_gpus_per_node=1
        actor_rollout_ref.rollout.free_cache_engine=False)
run_tmp() {  # run name -> its private /tmp, with links to the shared folders a run reads
  private_tmp "$DISC_DIR/tmp/$1" "$(basename "$SDPO_DEMO_MODEL")" "$(basename "$SDPO_DEMO_DATA_DIR")" \
    "$(basename "$SDPO_TOY_DATA_DIR")" "$(basename "$DISC_DIR")"
}

start_run() {  # <run dir> <task> <method> <seed> <problems> <budget> <--keep-going or ""> <before|cut> [overrides]
  local dir=$1 task=$2 method=$3 seed=$4 problems=$5 budget=$6 keep=$7 config=$8; shift 8
  [ -f "$dir/status.json" ] && grep -q '"returncode": 0' "$dir/status.json" && return 0  # finished earlier
  mkdir -p "$dir"
  local start_as; start_as=$(python3 bench/ttrl/ttrl_discovery.py relaunch --run-dir "$dir")  # resume | fresh
  local name; name=$(echo "${dir#"$DISC_DIR"/}" | tr / _)
  local prefix=(); [ $ISOLATE_OK = 1 ] && prefix=("${ISOLATE[@]}" "$(run_tmp "$name")")
  local cut=(); [ "$config" = cut ] && cut=("${CUT_OVERRIDES[@]}")
  local cmd; cmd=$(python3 bench/ttrl/ttrl_discovery.py command --task "$task" --method "$method" --seed "$seed" \
    --problems "$problems" --budget "$budget" --run-dir "$dir" $keep -- "${SHARED[@]}" "${cut[@]}" \
    "trainer.save_freq=$SAVE_FREQ" trainer.max_actor_ckpt_to_keep=1 trainer.resume_mode=auto "$@")
  echo "$cmd" > "$dir/command.txt"
  echo "{\"launched_at\": $(date +%s.%N), \"config\": \"$config\", \"start\": \"$start_as\"}" > "$dir/launch.json"
  (start=$(date +%s)
   # verl's file logger: every step's metrics (sdpo_lean/ttrl_* among them) as JSON lines. verl's Ray runtime env
   # sets VLLM_LOGGING_LEVEL=WARN unless the launching shell sets it (constants_ppo.get_ppo_ray_runtime_env), which
   # hid vLLM's start-up lines (weights, engine init, compile, CUDA graphs) from the start-up table on 2026-12-06
   VLLM_LOGGING_LEVEL=INFO VERL_FILE_LOGGER_PATH=$dir/metrics.jsonl eval timeout "$RUN_TIMEOUT" "${prefix[*]@Q}" "$cmd" \
     >> "$dir/stdout.log" 2>&1 < /dev/null
   rc=$?
   echo "{\"returncode\": $rc, \"wall_s\": $(( $(date +%s) - start ))}" > "$dir/status.json"
   echo "$(date +%T) $name rc=$rc wall=$(( $(date +%s) - start ))s" >> "$DISC_DIR/runs.txt") &
  VERL_PIDS+=($!)
  echo "$(date +%T) $name started ($config)" >> "$DISC_DIR/runs.txt"
}

job() {  # (issue 47) base rates and baselines by the sampler, the trained methods as verl runs, side by side
  mkdir -p "$DISC_DIR"
  [ -f "$SDPO_DEMO_MODEL/config.json" ] || timeout 180 python3 -m sdpo_data.smollm2 --out-dir "$SDPO_DEMO_MODEL" | tail -1
  python3 -m sdpo_data.addition_rows --out-dir "$SDPO_DEMO_DATA_DIR" --max-operand "$DEMO_MAX_OPERAND" | tail -1
  python3 -m sdpo_data.toy_lean --out-dir "$SDPO_TOY_DATA_DIR" | tail -1
  [ "$SWITCH_PROBE" = 1 ] && switch_probe &
  echo "$(date +%T) base rates (sampler, $BASE_SAMPLES each)" >> "$DISC_DIR/runs.txt"
  local task method seed problems ready=""
  for task in $TASKS; do
    [ -n "$(given_problems "$task")" ] && continue
    sampler "$task" "$DISC_DIR/base/$task" best_of_k:0 "$BASE_SAMPLES" --keep-going \
      "$(python3 bench/ttrl/ttrl_discovery.py candidates --task "$task" --data-dir "$SDPO_DEMO_DATA_DIR" \
         --count "$CANDIDATES" | tr , '\n' | grep -vxF -f <(kept_problems "$task" | tr , '\n'; echo) | paste -sd,)" &
  done
  wait
  for task in $TASKS; do
    if [ -n "$(given_problems "$task")" ]; then  # an earlier call's choice: the same problems on a fresh machine
      given_problems "$task" > "$DISC_DIR/problems_$task.txt"; ready+=" $task"
      echo "$(date +%T) $task problems (given): $(cat "$DISC_DIR/problems_$task.txt")" >> "$DISC_DIR/runs.txt"
      continue
    fi
    local kept; kept=$(kept_problems "$task")
    local more=$(( PER_TASK - $(echo "$kept" | tr , '\n' | grep -c .) ))
    python3 bench/ttrl/ttrl_discovery.py select --log "$DISC_DIR/base/$task/best_of_k/seed0/attempts.jsonl" \
      --samples "$BASE_SAMPLES" --max-rate "$MAX_RATE" --count "$more" --out "$DISC_DIR/base/$task/base_rate.json" \
      | sed "s/^/${kept:+$kept,}/" > "$DISC_DIR/problems_$task.txt"
    [ -s "$DISC_DIR/problems_$task.txt" ] && ready+=" $task"
    echo "$(date +%T) $task problems: $(cat "$DISC_DIR/problems_$task.txt")" >> "$DISC_DIR/runs.txt"
  done
  # the sampling baselines first (one vLLM engine per task, minutes), then the trained runs beside them
  for task in $ready; do
    sampler "$task" "$DISC_DIR/runs/$task" "$SAMPLED" "$BUDGET" "" "$(cat "$DISC_DIR/problems_$task.txt")" &
  done
  local slots; slots=$(verl_slots); echo "$(date +%T) $slots verl runs at a time" >> "$DISC_DIR/runs.txt"
  for task in $ready; do for method in $TRAINED; do for seed in $SEEDS; do
    while [ "$(running_verl)" -ge "$slots" ]; do sleep 5; done
    start_run "$DISC_DIR/runs/$task/$method/seed$seed" "$task" "$method" "$seed" \
      "$(cat "$DISC_DIR/problems_$task.txt")" "$BUDGET" "" "$(startup_config "$seed")"
    sleep 2
  done; done; done
  wait
  echo "$(date +%T) all runs ended" >> "$DISC_DIR/runs.txt"
  pack
}

# The single protocol's problem switch at the Qwen3-1.7B shape (random weights, SmolLM2's tokenizer): one SDPO queue
# run over PROBE_PROBLEMS with a budget of one step each (random weights solve nothing), so every step ends with a
# reset; its stdout.log's `sdpo_lean/ttrl_switch` lines give reset_s. It takes PROBE_GB of the GPU beside the job.
SWITCH_PROBE=${SWITCH_PROBE:-0}; PROBE_GB=${PROBE_GB:-40}
PROBE_PROBLEMS=${PROBE_PROBLEMS:-add_train_1,add_train_2,add_train_3,add_train_4}
PROBE_MODEL=${PROBE_MODEL:-$DISC_DIR/rand_qwen3_1_7b}  # under DISC_DIR: a run's private /tmp links only that
switch_probe() {
  echo "$(date +%T) switch probe: random Qwen3-1.7B shape at $PROBE_MODEL" >> "$DISC_DIR/runs.txt"
  [ -f "$PROBE_MODEL/config.json" ] || python3 - "$SDPO_DEMO_MODEL" "$PROBE_MODEL" <<'PY' >> "$DISC_DIR/runs.txt" 2>&1
import sys, torch
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM
tok = AutoTokenizer.from_pretrained(sys.argv[1])
cfg = Qwen3Config(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                  tie_word_embeddings=True, rope_theta=1000000, eos_token_id=tok.eos_token_id,
                  pad_token_id=tok.pad_token_id)
with torch.device("cuda"):
    model = Qwen3ForCausalLM(cfg).to(torch.bfloat16)
print(f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f}B parameters")
model.save_pretrained(sys.argv[2]); tok.save_pretrained(sys.argv[2])
PY
  VERL_PIDS=()
  start_run "$DISC_DIR/probe/demo/sdpo_1_7b/seed1" demo sdpo 1 "$PROBE_PROBLEMS" "$N" "" before \
    "actor_rollout_ref.model.path=$PROBE_MODEL"
  wait
}

given_problems() {  # <task> -> PROBLEMS_<task> (e.g. PROBLEMS_demo=add_train_1,...): skips the task's base rates
  local var="PROBLEMS_$1"; echo "${!var:-}"
}

kept_problems() {  # <task> -> KEEP_<task>: problems chosen by an earlier job, kept first; base rates pick the rest
  local var="KEEP_$1"; echo "${!var:-}"
}

sampler() {  # <task> <out dir> <method:seed,...> <budget> <--keep-going or ""> <problems>: one vLLM engine, in turn
  local log=$2/sampler.log; mkdir -p "$2"
  echo "$(date +%T) sampler $1 $3 started" >> "$DISC_DIR/runs.txt"
  python3 -m sdpo_eval.discovery_sampler --recipe "sdpo_$1" --problems "$6" --budget "$4" --runs "$3" \
    --out-dir "$2" --backend "$SAMPLER_BACKEND" --vllm-kv-cache-bytes "$SAMPLER_KV" $5 > "$log" 2>&1 < /dev/null
  local rc=$?
  echo "$(date +%T) sampler $1 $3 rc=$rc" >> "$DISC_DIR/runs.txt"
}

VERL_PIDS=()
running_verl() {  # verl runs of this job still going
  local n=0 pid; for pid in "${VERL_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && n=$((n + 1)); done; echo "$n"
}

# host memory per verl run: 12 demo runs and a sampler on a 128 GB host had Ray's memory monitor kill 3 runs' workers
# (2026-12-07, H200 call 13), so a run counts about 10 GB of host memory
HOST_GB_PER_RUN=${HOST_GB_PER_RUN:-11}
verl_slots() {  # verl runs at once: what the GPU (PER_RUN_GB each, after the samplers' 16 GB) and host memory hold
  local total; total=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
  local probe=0; [ "$SWITCH_PROBE" = 1 ] && probe=$PROBE_GB
  local n=$(( (${total:-0} / 1024 - 16 - probe) / PER_RUN_GB )); [ "$n" -lt 1 ] && n=1
  local host; host=$(free -g | awk '/^Mem:/ {print $2}')
  local by_host=$(( (${host:-0} - 16) / HOST_GB_PER_RUN )); [ "$by_host" -ge 1 ] && [ "$by_host" -lt "$n" ] && n=$by_host
  [ -n "${MAX_PARALLEL:-}" ] && [ "$MAX_PARALLEL" -lt "$n" ] && n=$MAX_PARALLEL
  echo "$n"
}

startup_config() {  # seed -> the start-up setting its runs use: odd seeds as before, even seeds with the cut
  if [ $(( $1 % 2 )) = 1 ]; then echo before; else echo cut; fi
}

pack() {  # the report and the start-up table from whatever runs exist, plus a tarball of their logs
  local base=(); for f in "$DISC_DIR"/base/*/base_rate.json; do [ -f "$f" ] && base+=(--base-rate "$f"); done
  for f in "$DISC_DIR"/{runs,probe}/*/*/*/stdout.log; do  # the marks and vLLM's start-up lines, kept whole
    [ -f "$f" ] && grep -aE "$STARTUP_LINES" "$f" > "$(dirname "$f")/startup_lines.log"; done
  [ -d "$DISC_DIR/runs" ] && python3 bench/ttrl/ttrl_discovery.py report --run-dir "$DISC_DIR/runs" --budget "$BUDGET" \
    "${base[@]}" --call "${CALL_NOTE:-$(date -u +%F) one GPU, bench/ttrl/run_ttrl_discovery.sh}" \
    --out "$OUT/ttrl_discovery" 2>&1 | tail -12
  [ -d "$DISC_DIR/runs" ] && python3 bench/ttrl/startup_table.py --run-dir "$DISC_DIR/runs" --out "$OUT/startup" 2>&1
  grep -h "$SWITCH_LINE" "$DISC_DIR"/{runs,probe}/*/*/*/stdout.log > "$DISC_DIR/switches.txt" 2>/dev/null
  for f in "$DISC_DIR"/{runs,probe}/*/*/*/stdout.log "$DISC_DIR"/{base,runs}/*/sampler.log; do
    [ -f "$f" ] && tail -c 20000 "$f" | sed 's/\x1b\[[0-9;]*m//g' > "${f%.log}.tail"; done
  nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > "$DISC_DIR/gpu.csv" 2>/dev/null
  tar czf "$OUT/ttrl_discovery_raw.tar.gz" -C "$DISC_DIR" --exclude tmp --exclude checkpoints --exclude stdout.log \
    --exclude sampler.log --exclude src $(cd "$DISC_DIR" && ls -d runs.txt gpu.csv base runs probe switches.txt \
      problems_*.txt 2>/dev/null)
}
SWITCH_LINE='sdpo_lean/ttrl_switch'
STARTUP_LINES='sdpo_lean/ttrl_switch|sdpo_lean/startup|Loading weights took|init engine \(profile|torch\.compile takes|Graph capturing finished'

probe() {  # the switch probe alone, in the foreground, into $OUT (a call of its own)
  mkdir -p "$DISC_DIR"
  [ -f "$SDPO_DEMO_MODEL/config.json" ] || timeout 180 python3 -m sdpo_data.smollm2 --out-dir "$SDPO_DEMO_MODEL" | tail -1
  python3 -m sdpo_data.addition_rows --out-dir "$SDPO_DEMO_DATA_DIR" --max-operand "$DEMO_MAX_OPERAND" | tail -1
  switch_probe
  local log="$DISC_DIR/probe/demo/sdpo_1_7b/seed1/stdout.log"
  grep -aE "$STARTUP_LINES" "$log" > "$OUT/probe_lines.txt"; tail -c 30000 "$log" > "$OUT/probe_tail.txt"
  cat "$OUT/probe_lines.txt"
}

launch() {  # the job from a copy of the tree under DISC_DIR (the call's folder goes when the call returns)
  mkdir -p "$DISC_DIR"
  if [ -f "$DISC_DIR/job.pid" ] && kill -0 "$(cat "$DISC_DIR/job.pid")" 2>/dev/null; then
    echo "the job is already running (pid $(cat "$DISC_DIR/job.pid")): collecting"
  else
    # the call's tree, first on the path: the job runs this call's code without reinstalling it (project.sh, ~1 min)
    rm -rf "$DISC_DIR/src" && mkdir -p "$DISC_DIR/src" && cp -r bench recipes hydra_plugins sdpo_* lean_env reward \
      "$DISC_DIR/src/"
    (cd "$DISC_DIR/src" && OUT=$DISC_DIR/job_out PYTHONPATH=$DISC_DIR/src:${PYTHONPATH:-} setsid nohup \
       bash bench/ttrl/run_ttrl_discovery.sh job > "$DISC_DIR/job.log" 2>&1 < /dev/null & echo $! > "$DISC_DIR/job.pid")
  fi
  WAIT_S=$WATCH_S collect
}

collect() {
  local until=$((SECONDS + WAIT_S))
  while [ $SECONDS -lt $until ] && kill -0 "$(cat "$DISC_DIR/job.pid")" 2>/dev/null; do sleep 20; done
  kill -0 "$(cat "$DISC_DIR/job.pid")" 2>/dev/null && echo "job still running at $(date +%T)"
  tail -n 40 "$DISC_DIR/runs.txt"; tail -n 5 "$DISC_DIR/job.log"
  pack
}

"$MODE"
