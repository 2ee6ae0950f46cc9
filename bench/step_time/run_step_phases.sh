#!/usr/bin/env bash
# Fair step time in one GPU job (issue 18): the rollout once per length (bench/step_time/step_generate.py), then each
# algorithm's training phases on that same rollout, one process per algorithm (bench/step_time/step_phases.py).
#   bash bench/step_time/run_step_phases.sh generate        inputs + rollouts at every length      (~6 min on an H200)
#   bash bench/step_time/run_step_phases.sh launch          training phases in the background, one algorithm after another;
#                                                 PROFILE_LENGTHS="2048": then, once every timing is done, one
#                                                 process per algorithm for a profiled 2K step (PROFILE_TIMEOUT each)
#   WAIT_S=500 bash bench/step_time/run_step_phases.sh wait  wait for them (at most WAIT_S), then pack step_phases.tar.gz
#   ROLLOUTS_FROM=<dir> bash bench/step_time/run_step_phases.sh reuse   inputs + an earlier job's rollouts.{pt,json}, no vLLM
#                                                 (the token ids and generation times of that job; saves ~200 s)
#   T0=<call start, epoch s> bash bench/step_time/run_step_phases.sh start   generate (reuse with ROLLOUTS_FROM), launch, and
#                                                 wait until T0 + CALL_S (570): the first call does it all
#   SOLUTION=whole|prover bash bench/step_time/run_step_phases.sh synthetic   inputs + a rollout file built without vLLM
#                                                 (bench/step_time/synthetic_rollouts.py: random replies, recorded gen_s;
#                                                 the sibling solution: the whole reply, or a thinking prover's proof)
#   T0=<call start> bash bench/step_time/run_step_phases.sh call   the job of one device call, in the foreground: a copy of
#                                                 bench/ under $WORK/$JOB (call_$T0; nothing runs from the call's folder),
#                                                 synthetic rollouts, then each ALGOS entry in turn, started only while
#                                                 ALGO_EST_S (150) fits before T0 + CALL_S (540); $OUT/step_phases.tar.gz
#                                                 is repacked after each, so a cut call brings back what finished.
#                                                 An entry algo:attention runs with that attention instead of
#                                                 $ATTENTION, to compare_<algo>_<attention>.json. A named JOB spans
#                                                 calls on one machine: an entry that finished every step in an
#                                                 earlier call is not run again (on a fresh machine it is)
# ATTENTION=fa4_varlen: every algorithm packed (dynamic batch size, step_phases.PACKED_TOKENS per micro-batch)
# Files live in $WORK (kept between device calls); what a call should bring back is copied to $OUT.
# Summarise with: python bench/step_time/step_time_fair.py --phases <unpacked folder> --call "<what ran>" [--phases ... --call ...]
set -uo pipefail
WORK=${WORK:-/tmp/step_phases}; OUT=${OUT:-$WORK}; mkdir -p "$WORK" "$OUT"
LENGTHS=${LENGTHS:-"2048 8192"}; ALGOS=${ALGOS:-"grpo_fused sdpo srpo sdpo_shared_prefix grpo_fused_triton grpo"}; ITERS=${ITERS:-"3 2"}
MODEL=${MODEL:-/tmp/qwen3_1p7b_random}; DATA=${DATA:-/tmp/step_data}
export SDPO_DATA_DIR=$DATA SDPO_OUTPUT_DIR=${SDPO_OUTPUT_DIR:-/tmp/sdpo_runs} VLLM_WORKER_MULTIPROC_METHOD=spawn
case ${1:-} in
  generate)
    python3 bench/step_time/make_step_time_inputs.py --model-dir "$MODEL" --data-dir "$DATA" | tail -1
    # shellcheck disable=SC2086
    timeout "${GEN_TIMEOUT:-480}" python3 bench/step_time/step_generate.py --model-dir "$MODEL" --data-dir "$DATA" \
      --lengths $LENGTHS --gpu-memory-utilization "${GPU_MEM:-0.5}" --out "$WORK/rollouts.pt" > "$WORK/generate.log" 2>&1
    echo "generate rc=$?"; grep -E "^r[0-9]+:|Error|error" "$WORK/generate.log" | head -8
    # the first training process of the last job spent 5.5 min before its worker existed (cold imports?); import
    # once here, timed, so that a slow first import shows up and does not eat the training processes' time
    python3 -c "import time; t = time.time(); import sdpo_ext.worker; print(f'imports: {time.time() - t:.1f} s')" \
      2>&1 | tail -1
    cp "$WORK"/rollouts.* "$WORK/generate.log" "$OUT/" 2>/dev/null; true ;;
  reuse)
    : "${ROLLOUTS_FROM:?must name a folder with an earlier job\'s rollouts.pt and rollouts.json}"
    python3 bench/step_time/make_step_time_inputs.py --model-dir "$MODEL" --data-dir "$DATA" | tail -1
    cp "$ROLLOUTS_FROM"/rollouts.pt "$ROLLOUTS_FROM"/rollouts.json "$WORK/" || exit 1
    [ "$OUT" -ef "$WORK" ] || cp "$WORK/rollouts.json" "$OUT/"; echo "rollouts from $ROLLOUTS_FROM" ;;
  launch)
    # setsid: the device machine ends a call's process group when the call returns; this one must outlive it
    # profiles last, each under its own timeout: a slow profile must never cost a timing
    # shellcheck disable=SC2086
    setsid nohup bash -c "for algo in $ALGOS; do
        timeout ${PHASE_TIMEOUT:-900} python3 bench/step_time/step_phases.py --algo \$algo --rollouts '$WORK/rollouts.pt' \
          --model-dir '$MODEL' --lengths $LENGTHS --iters $ITERS --out '$WORK/phases_'\$algo.json \
          ${ATTENTION:+--attention $ATTENTION} \
          > '$WORK/phases_'\$algo.log 2>&1
        echo \"\$algo rc=\$?\" >> '$WORK/phases_done.txt'
      done
      for algo in ${PROFILE_LENGTHS:+$ALGOS}; do
        timeout ${PROFILE_TIMEOUT:-300} python3 bench/step_time/step_phases.py --algo \$algo --rollouts '$WORK/rollouts.pt' \
          --model-dir '$MODEL' --lengths ${PROFILE_LENGTHS:-} --profile-only --out '$WORK/profile_'\$algo.json \
          > '$WORK/profile_'\$algo.log 2>&1
        echo \"profile \$algo rc=\$?\" >> '$WORK/phases_done.txt'
      done; echo all >> '$WORK/phases_done.txt'" > /dev/null 2>&1 < /dev/null &
    echo "launched: $ALGOS" ;;
  wait)
    end=$(( $(date +%s) + ${WAIT_S:-500} ))
    while ! grep -q '^all' "$WORK/phases_done.txt" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
    cat "$WORK/phases_done.txt" 2>/dev/null
    for f in "$WORK"/phases_*.log "$WORK"/profile_*.log; do echo "== $f"; grep -E " iter |Error|error" "$f" | tail -8; done
    tar -czf "$OUT/step_phases.tar.gz" -C "$WORK" --exclude rollouts.pt . ;;
  synthetic)
    python3 bench/step_time/make_step_time_inputs.py --model-dir "$MODEL" --data-dir "$DATA" | tail -1
    # shellcheck disable=SC2086
    python3 bench/step_time/synthetic_rollouts.py --model-dir "$MODEL" --data-dir "$DATA" --lengths $LENGTHS \
      --solution "${SOLUTION:?must be whole or prover: the sibling solution the teacher prompts show}" \
      --out "$WORK/rollouts.pt" || exit 1
    [ "$OUT" -ef "$WORK" ] || cp "$WORK/rollouts.json" "$OUT/" ;;
  call)
    : "${T0:?must be the start of the call in epoch seconds}"
    export WORK=$WORK/${JOB:-call_$T0} OUT; rm -rf "$WORK/src"; mkdir -p "$WORK/src" && cp -r bench "$WORK/src/" \
      && cd "$WORK/src" || exit 1
    pack() { tar -czf "$OUT/step_phases.tar.gz" -C "$WORK" --exclude rollouts.pt --exclude src .; }
    # rollouts of another solution case (a JOB name reused on a warm machine) are built again
    grep -qs "\"case\": \"${SOLUTION:-}\"" "$WORK/rollouts.json" || rm -f "$WORK/rollouts.pt"
    [ -f "$WORK/rollouts.pt" ] || bash bench/step_time/run_step_phases.sh synthetic || { pack; exit 1; }
    for entry in $ALGOS; do
      algo=${entry%%:*}; attention=${ATTENTION:-}; name=phases_$algo
      if [[ $entry == *:* ]]; then attention=${entry#*:}; name=compare_${algo}_$attention; fi
      # shellcheck disable=SC2086
      if python3 bench/step_time/step_phases.py --finished "$WORK/$name.json" --lengths $LENGTHS --iters $ITERS \
          2>/dev/null; then echo "$entry: finished in an earlier call of this job"; continue; fi
      left=$(( T0 + ${CALL_S:-540} - $(date +%s) ))
      if [ "$left" -lt "${ALGO_EST_S:-150}" ]; then echo "$entry skipped: $left s left" >> "$WORK/phases_done.txt"; continue; fi
      # shellcheck disable=SC2086
      timeout $(( left - 10 )) python3 bench/step_time/step_phases.py --algo "$algo" --rollouts "$WORK/rollouts.pt" \
        --model-dir "$MODEL" --lengths $LENGTHS --iters $ITERS --out "$WORK/$name.json" \
        ${attention:+--attention $attention} > "$WORK/$name.log" 2>&1
      echo "$entry rc=$? at $(( $(date +%s) - T0 )) s" | tee -a "$WORK/phases_done.txt"
      grep -E " iter |Error" "$WORK/$name.log" | tail -4
      pack
    done
    pack ;;
  start)
    if [ -n "${ROLLOUTS_FROM:-}" ]; then rollouts=reuse; else rollouts=generate; fi
    bash "$0" "$rollouts" && bash "$0" launch
    WAIT_S=$(( ${T0:-$(date +%s)} + ${CALL_S:-570} - $(date +%s) )) bash "$0" wait ;;
  *) echo "usage: $0 generate|reuse|synthetic|launch|wait|start|call" >&2; exit 2 ;;
esac
