#!/usr/bin/env bash
# The GPU-call wrapper of the discovery figure (issue 55): stage the demo model and data, run the one documented
# command, `python -m sdpo_eval.discovery run`, detached in its own process session, and bring back what it wrote.
# The job itself (problem choice by base rate, the sampler baselines, the verl runs side by side sized by GPU memory,
# resume, the report and start-up table) is sdpo_eval/discovery/launcher.py.
#
#   bash bench/ttrl/run_ttrl_discovery.sh launch    # call 1: start the job detached, watch it WATCH_S s, pack $OUT
#   bash bench/ttrl/run_ttrl_discovery.sh collect   # later calls on the same machine: wait up to WAIT_S s, pack $OUT
#   bash bench/ttrl/run_ttrl_discovery.sh job       # the job in the foreground (what `launch` starts)
#   DRY_RUN=1 bash bench/ttrl/run_ttrl_discovery.sh job   # the job's commands only (CPU; needs the demo data)
#   bash bench/ttrl/run_ttrl_discovery.sh probe     # the switch probe alone, in the foreground, into $OUT
#
# SWITCH_PROBE=1: beside the job, the single protocol's problem switch at the Qwen3-1.7B shape (random weights,
# SmolLM2's tokenizer): one SDPO queue run over PROBE_PROBLEMS with a budget of one step each (random weights solve
# nothing), so every step ends with a reset; its report's reset_s_per_problem is the switch cost at that shape. It
# takes PROBE_GB of the GPU (the job's verl runs get what is left).
#
# Every knob is an environment variable. The defaults are the issue-55 figure: the demo, today's 16 problems plus
# CHOOSE=16 more with no success in BASE_SAMPLES=64 base samples (>= 32 problems), every method of the figure (the
# trained ones under the single protocol, sdpo_confident and srpo also under the shared one), seeds 1-4, budget 64
# attempts a problem, 16 samples a prompt. A later call on a fresh machine runs more seeds on the same problems with
# PROBLEMS=<problems.txt of the first call> CHOOSE=0 SEEDS=...; `python -m sdpo_eval.discovery merge` joins the calls.
set -uo pipefail
MODE=${1:?usage: run_ttrl_discovery.sh launch|collect|job|probe}
OUT=${OUT:-./bench_out}; mkdir -p "$OUT"
DISC_DIR=${DISC_DIR:-/tmp/ttrl_discovery}
TASK=${TASK:-demo}
METHODS=${METHODS:-best_of_k,reprompt,grpo,sdpo,sdpo_confident,srpo,sdpo_confident_shared,srpo_shared}
SEEDS=${SEEDS:-1,2,3,4}
BUDGET=${BUDGET:-64}; N=${N:-16}  # judged attempts a problem; samples a prompt (single protocol: 1 prompt a step)
# the 16 problems of the 2026-12-06 figure (bench/ttrl/results/ttrl_discovery_2026-12-06.json), always run
PROBLEMS=${PROBLEMS:-add_train_115,add_train_137,add_train_144,add_train_145,add_train_165,add_train_182,add_train_192,add_train_195,add_train_20,add_train_26,add_train_262,add_train_271,add_train_277,add_train_289,add_train_294,add_train_297}
CHOOSE=${CHOOSE:-16}; CANDIDATES=${CANDIDATES:-256}; BASE_SAMPLES=${BASE_SAMPLES:-64}; MAX_RATE=${MAX_RATE:-0}
DEMO_MAX_OPERAND=${DEMO_MAX_OPERAND:-100}  # the demo data of the 2026-12-06 figure
# verl runs at once: (GPU memory - SAMPLER_GB) / PER_RUN_GB, at most MAX_PARALLEL (16 host cores)
PER_RUN_GB=${PER_RUN_GB:-5}; SAMPLER_GB=${SAMPLER_GB:-8}; MAX_PARALLEL=${MAX_PARALLEL:-12}
SAVE_FREQ=${SAVE_FREQ:-32}  # steps between checkpoints (a relaunch on the same machine resumes from them; -1: none)
RUN_TIMEOUT=${RUN_TIMEOUT:-1200}; SAMPLER_BACKEND=${SAMPLER_BACKEND:-vllm}
EXTRA=${EXTRA:-}  # more Hydra overrides for every run, space-separated
WATCH_S=${WATCH_S:-480}; WAIT_S=${WAIT_S:-540}
SWITCH_PROBE=${SWITCH_PROBE:-0}; PROBE_GB=${PROBE_GB:-40}
PROBE_PROBLEMS=${PROBE_PROBLEMS:-add_train_1,add_train_2,add_train_3,add_train_4}
PROBE_MODEL=${PROBE_MODEL:-/tmp/rand_qwen3_1_7b}
export SDPO_DEMO_MODEL=${SDPO_DEMO_MODEL:-/tmp/smollm2} SDPO_DEMO_DATA_DIR=${SDPO_DEMO_DATA_DIR:-/tmp/demo_data}
export SDPO_TOY_DATA_DIR=${SDPO_TOY_DATA_DIR:-/tmp/toy}

stage() {  # the demo model and data (the toy Lean set too)
  [ -f "$SDPO_DEMO_MODEL/config.json" ] || timeout 180 python3 -m sdpo_data.smollm2 --out-dir "$SDPO_DEMO_MODEL" | tail -1
  python3 -m sdpo_data.addition_rows --out-dir "$SDPO_DEMO_DATA_DIR" --max-operand "$DEMO_MAX_OPERAND" | tail -1
  python3 -m sdpo_data.toy_lean --out-dir "$SDPO_TOY_DATA_DIR" | tail -1
}

job() {
  mkdir -p "$DISC_DIR"
  [ -z "${DRY_RUN:-}" ] && stage
  local reserve=0
  if [ "$SWITCH_PROBE" = 1 ] && [ -z "${DRY_RUN:-}" ]; then reserve=$PROBE_GB; switch_probe & fi
  # shellcheck disable=SC2086  # EXTRA: several overrides
  python3 -m sdpo_eval.discovery run --task "$TASK" --methods "$METHODS" --seeds "$SEEDS" --budget "$BUDGET" \
    --problems "$PROBLEMS" --choose "$CHOOSE" --candidates "$CANDIDATES" --base-samples "$BASE_SAMPLES" \
    --max-rate "$MAX_RATE" --per-run-gb "$PER_RUN_GB" --sampler-gb "$SAMPLER_GB" --max-parallel "$MAX_PARALLEL" \
    --reserve-gb "$reserve" \
    --save-freq "$SAVE_FREQ" --run-timeout-s "$RUN_TIMEOUT" --sampler-engine "$SAMPLER_BACKEND" \
    --out-dir "$DISC_DIR" --call "${CALL_NOTE:-$(date -u +%F) one GPU, bench/ttrl/run_ttrl_discovery.sh}" \
    ${DRY_RUN:+--dry-run} -- "actor_rollout_ref.rollout.n=$N" $EXTRA
  wait
}

switch_probe() {  # (SWITCH_PROBE above) the probe's job folder: $DISC_DIR/probe
  [ -f "$PROBE_MODEL/config.json" ] || python3 - "$SDPO_DEMO_MODEL" "$PROBE_MODEL" <<'PY' >> "$DISC_DIR/probe.log" 2>&1
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
  python3 -m sdpo_eval.discovery run --task demo --methods sdpo --seeds 1 --budget "$N" --problems "$PROBE_PROBLEMS" \
    --max-parallel 1 --save-freq -1 --out-dir "$DISC_DIR/probe" --call "switch probe, random Qwen3-1.7B shape" \
    -- "actor_rollout_ref.model.path=$PROBE_MODEL" "actor_rollout_ref.rollout.n=$N" >> "$DISC_DIR/probe.log" 2>&1
}

probe() {  # the switch probe alone, in the foreground, into $OUT (a call of its own)
  mkdir -p "$DISC_DIR"; stage; switch_probe
  cp "$DISC_DIR"/probe/report/discovery.json "$OUT/probe_discovery.json" 2>/dev/null
  cp "$DISC_DIR"/probe/runs/sdpo/seed1/switch_lines.log "$OUT/probe_switches.txt" 2>/dev/null
  tail -c 30000 "$DISC_DIR/probe/runs/sdpo/seed1/stdout.log" > "$OUT/probe_tail.txt" 2>/dev/null
  tail -n 20 "$DISC_DIR/probe.log"; cat "$OUT/probe_switches.txt" 2>/dev/null
}

pack() {  # the report and start-up table of whatever ran, into $OUT, and a tarball of the small logs
  python3 -m sdpo_eval.discovery pack --out-dir "$DISC_DIR" --task "$TASK" --budget "$BUDGET" \
    --call "${CALL_NOTE:-$(date -u +%F) one GPU, bench/ttrl/run_ttrl_discovery.sh}" 2>&1 | tail -3
  cp "$DISC_DIR"/report/* "$OUT/" 2>/dev/null
  if [ -d "$DISC_DIR/probe" ]; then
    python3 -m sdpo_eval.discovery pack --out-dir "$DISC_DIR/probe" --task demo --budget "$N" 2>&1 | tail -1
    cp "$DISC_DIR"/probe/report/discovery.json "$OUT/probe_discovery.json" 2>/dev/null
  fi
  for f in "$DISC_DIR"/runs/*/*/stdout.log "$DISC_DIR"/probe/runs/*/*/stdout.log "$DISC_DIR"/{base,sampler}/stdout.log; do
    [ -f "$f" ] && tail -c 20000 "$f" | sed 's/\x1b\[[0-9;]*m//g' > "${f%.log}.tail"; done
  nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > "$DISC_DIR/gpu.csv" 2>/dev/null
  tar czf "$OUT/discovery_raw.tar.gz" -C "$DISC_DIR" --exclude tmp --exclude checkpoints --exclude stdout.log \
    --exclude src $(cd "$DISC_DIR" && ls -d job.txt gpu.csv problems.txt base runs sampler report probe probe.log \
      2>/dev/null)
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
  tail -n 40 "$DISC_DIR/job.txt" 2>/dev/null; tail -n 5 "$DISC_DIR/job.log"
  pack
}

"$MODE"
