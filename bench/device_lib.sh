# Shared steps of the GDN device scripts (source it; bash). Contract: every function prints one
# summary line per check in the words the session records quote (`BITWISE (...)`, `HASHES DIFFER
# (...)`, `test result: ...`, `ERROR SUMMARY: ...`), bounds every test binary with `timeout`, and
# writes its scratch under $DEV_TMP (default /tmp/dnnp-dev). It runs from the root of an unpacked
# staging (`.device/` beside `bench/`), after `source .device/device-env.sh`.
#
# Before this file every device script and final-run step spelled out the same helpers (the test
# binary lookup, the hash extraction, the comparison against bench/gdn_hashes_session9.txt, the
# memcheck and timing lines); new scripts source this instead:
#   source bench/device_lib.sh
#   dev_begin mytask                                  # log to $OUT/mytask.log, device-env, DEV_TMP
#   t=$(dev_bin gpu_gdn)
#   dev_hashes bwd "$t" > $DEV_TMP/h_new DNNPLAN_GDN_BWD_TOKENS=tc13    # (env after the file)
#   dev_same $DEV_TMP/h_new $DEV_TMP/h_rule "tc13 == tc12"
#   dev_compare fwd "forward at 7 pieces: this build == base" "$t" base/gpu_gdn DNNPLAN_GDN_FWD_PIECES=7
#   dev_fwd_case slim "$t" DNNPLAN_GDN_FWD_FACTORS=slim   # result line; $DEV_TMP/h_slim, p_slim.log
#   dev_cover_reference "default" $DEV_TMP/h_rule $DEV_TMP/f_rule
#   dev_memcheck "$t" backward_parity DNNPLAN_GDN_BWD_TOKENS=tc13

DEV_TMP=${DEV_TMP:-/tmp/dnnp-dev}
mkdir -p "$DEV_TMP"
# One FNV hash as DNNPLAN_GDN_TEST_HASHES=1 prints it.
DEV_HASH_RE="#[0-9a-f]{16}"
# The reference hashes (the session-9 defaults; sessions 10 and later reproduced all of them).
DEV_REFERENCE_HASHES=${DEV_REFERENCE_HASHES:-bench/gdn_hashes_session9.txt}

# dev_begin NAME: the preamble of a device script: everything after it is also logged to
# $OUT/NAME.log, .device/device-env.sh is sourced (its own output to $OUT/env.log), DEV_TMP becomes
# /tmp/NAME (created), and one line names the GPU, driver and SM clock. Call it first, at the top
# level of the script (not in a subshell: it redirects the script's own output). After it a bare
# `wait` may also wait for that tee (recent bash includes the last process substitution) and
# never return: wait on the background job's pid (session 61's call a most likely hung so).
dev_begin() {
  exec > >(tee "$OUT/$1.log") 2>&1
  source .device/device-env.sh > "$OUT/env.log" 2>&1
  DEV_TMP=/tmp/$1
  mkdir -p "$DEV_TMP"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
}

# dev_ncu: the path of Nsight Compute's ncu on the device machine (on PATH, else the CUDA
# toolkit's or a standalone install's); empty when none is installed.
dev_ncu() {
  command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1
}

# dev_bin NAME: the staged test binary `.device/tests/NAME-<hash>`.
dev_bin() {
  ls ".device/tests/$1-"* 2>/dev/null | grep -E "/$1-[0-9a-f]+$" | head -1
}

# dev_hashes bwd|fwd BIN [VAR=VALUE ...]: the hash lines of backward_parity (gradients) or
# forward_parity (O / states) of BIN under the given environment, with timings stripped.
dev_hashes() {
  local which=$1 bin=$2; shift 2
  local filter=backward_parity
  [ "$which" = fwd ] && filter=forward_parity
  env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout "${DEV_CAP_S:-40}" "$bin" "$filter" --test-threads=1 --nocapture 2>&1 \
    | grep -E "$DEV_HASH_RE" | sed -E 's/ in [0-9.]+ ?m?s//'
}

# The forward tests whose hashes dev_fwd_case records.
DEV_FWD_TESTS="forward_parity state_pool batch_invariant"

# dev_case LOG FILTER LABEL TAG BIN [VAR=VALUE ...]: the tests FILTER (word-split) of BIN with
# hashes on under the given environment, capped at ${DEV_CAP_S:-60} s; prints "LABELTAG (VAR=VALUE
# ...): <test result line> <first panic>", keeps the log in $DEV_TMP/LOG_TAG.log and the hash
# lines (timings stripped) in $DEV_TMP/h_TAG for dev_same. Called through the two below.
dev_case() {
  local log=$1 filter=$2 label=$3 tag=$4 bin=$5; shift 5
  env DNNPLAN_GDN_TEST_HASHES=1 "$@" timeout "${DEV_CAP_S:-60}" $bin $filter --test-threads=1 --nocapture > $DEV_TMP/${log}_$tag.log 2>&1
  echo "$label$tag ($*): $(grep -E 'test result' $DEV_TMP/${log}_$tag.log) $(grep -m1 panicked $DEV_TMP/${log}_$tag.log)"
  grep -E "$DEV_HASH_RE" $DEV_TMP/${log}_$tag.log | sed -E 's/ in [0-9.]+ ?m?s//' > $DEV_TMP/h_$tag
}

# dev_fwd_case TAG BIN [VAR=VALUE ...]: dev_case of the forward tests ($DEV_FWD_TESTS), log
# $DEV_TMP/p_TAG.log, line "TAG (...): ...".
dev_fwd_case() { dev_case p "$DEV_FWD_TESTS" "" "$@"; }

# dev_bwd_case TAG BIN [VAR=VALUE ...]: dev_case of backward_parity, log $DEV_TMP/b_TAG.log,
# line "backward_parity TAG (...): ...".
dev_bwd_case() { dev_case b backward_parity "backward_parity " "$@"; }

# dev_same A B LABEL: BITWISE when the two hash files are equal and not empty.
dev_same() {
  if [ -s "$1" ] && cmp -s "$1" "$2"; then
    echo "BITWISE ($3)"
  else
    echo "HASHES DIFFER ($3): $(diff "$1" "$2" | grep -c '^[<>]') differing lines of $(wc -l < "$1") / $(wc -l < "$2")"
  fi
}

# dev_port_diff A B LABEL: per output port (the word before each hash), how many lines of the two
# hash files (the same tests, line by line) hold different hashes: "PORTS (LABEL): dQ 0/12 ...".
dev_port_diff() {
  paste -d '\n' "$1" "$2" | awk -v label="$3" '
    NR % 2 == 1 { n = split($0, a, " "); next }
    {
      split($0, b, " ")
      for (i = 3; i <= n; i++) if (a[i] ~ /^#[0-9a-f]+$/) {
        p = a[i - 2]
        if (!(p in total)) order[++k] = p
        total[p]++
        if (a[i] != b[i]) diff[p]++
      }
    }
    END { s = ""; for (j = 1; j <= k; j++) s = s sprintf(" %s %d/%d", order[j], diff[order[j]] + 0, total[order[j]]); print "PORTS (" label "):" s }'
}

# dev_compare bwd|fwd LABEL BIN_A BIN_B [VAR=VALUE ...]: dev_hashes of both binaries under the same
# environment, kept in $DEV_TMP/c_TAG_{a,b} (TAG: LABEL's letters and digits), then dev_same's line.
dev_compare() {
  local which=$1 label=$2 a=$3 b=$4; shift 4
  local tag
  tag=$(printf '%s' "$which $label" | tr -c 'A-Za-z0-9' '_')
  dev_hashes "$which" "$a" "$@" > "$DEV_TMP/c_${tag}_a"
  dev_hashes "$which" "$b" "$@" > "$DEV_TMP/c_${tag}_b"
  dev_same "$DEV_TMP/c_${tag}_a" "$DEV_TMP/c_${tag}_b" "$label"
}

# dev_cover_reference LABEL FILE...: BITWISE when every hash of $DEV_REFERENCE_HASHES occurs in
# the given hash files.
dev_cover_reference() {
  local label=$1; shift
  grep -oE "$DEV_HASH_RE" "$DEV_REFERENCE_HASHES" | sort -u > "$DEV_TMP/ref_want"
  cat "$@" | grep -oE "$DEV_HASH_RE" | sort -u > "$DEV_TMP/ref_have"
  local want miss
  want=$(wc -l < "$DEV_TMP/ref_want")
  miss=$(comm -23 "$DEV_TMP/ref_want" "$DEV_TMP/ref_have" | wc -l)
  if [ "$want" -gt 0 ] && [ "$miss" = 0 ]; then
    echo "BITWISE ($label: $want hashes of $DEV_REFERENCE_HASHES, 0 missing)"
  else
    echo "HASHES DIFFER ($label: $want hashes of $DEV_REFERENCE_HASHES, $miss missing)"
  fi
}

# dev_parity LABEL BIN FILTER [VAR=VALUE ...]: the test result line of FILTER (empty = every
# test) under the given environment, and the first panic if any.
dev_parity() {
  local label=$1 bin=$2 filter=$3; shift 3
  echo "$label: $(env "$@" timeout "${DEV_CAP_S:-60}" "$bin" $filter --test-threads=1 2>&1 \
    | grep -E 'test result|panicked' | head -2 | tr '\n' ' ')"
}

# dev_memcheck BIN FILTER [VAR=VALUE ...]: compute-sanitizer memcheck's ERROR SUMMARY and the
# test result line.
dev_memcheck() {
  local bin=$1 filter=$2; shift 2
  echo "memcheck $filter ${*:-(defaults)}: $(env "$@" timeout "${DEV_CAP_S:-60}" compute-sanitizer --tool memcheck \
    --print-limit 5 "$bin" "$filter" --test-threads=1 2>&1 | grep -E 'ERROR SUMMARY|test result' | tr '\n' ' ')"
}

# dev_timing LABEL BIN VARIANTS [VAR=VALUE ...]: timing_at_benchmark_shapes of BIN (whole
# forward and backward, backward stages of VARIANTS) at the four benchmark shapes.
dev_timing() {
  local label=$1 bin=$2 variants=$3; shift 3
  echo "$label:"
  env DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS="$variants" "$@" timeout "${DEV_CAP_S:-45}" "$bin" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "bwd stages|gdn_sm90 timing|panicked"
}

# dev_bench_fwd_order SCHEDULES BIN_B BIN_T [ORDER]: gdn_benchmark_ours of the bench binaries BIN_B
# and BIN_T under DNNPLAN_GDN_BENCH_SCHEDULES=SCHEDULES, one process per letter of ORDER (default
# "B T T B"), each capped at 40 s; prints "== bench WHO", the forward BENCH lines (and any panic)
# and the elapsed seconds; the logs stay in $DEV_TMP/bench_WHO_SECONDS.log.
dev_bench_fwd_order() {
  local sched=$1 bb=$2 tb=$3 order=${4:-B T T B} who bin log
  for who in $order; do
    bin=$bb; [ "$who" = T ] && bin=$tb
    echo "== bench $who"
    log=$DEV_TMP/bench_${who}_${SECONDS}.log
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$sched timeout 40 $bin gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
    grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
    echo "elapsed ${SECONDS}s"
  done
}

# dev_fwd_ab ROUNDS VAR...: the whole forward and its prep at the four benchmark shapes
# (timing_at_benchmark_shapes under DNNPLAN_GDN_TIMING_FWD_SLIMPREP=d,d,d: three samples each), one
# process per binary, the binaries named by the shell variables VAR... in turn, ROUNDS times (e.g.
# `dev_fwd_ab 3 b t` runs $b $t $b $t $b $t); each line prefixed by its variable's name.
dev_fwd_ab() {
  local rounds=$1 r who; shift
  for ((r = 0; r < rounds; r++)); do
    for who in "$@"; do
      DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP=d,d,d timeout 40 "${!who}" timing_at_benchmark_shapes \
        --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked" \
        | sed -E "s/^test timing_at_benchmark_shapes \.\.\. //; s/^/$who /"
    done
  done
}

# dev_bwd_stages_ab ROUNDS VAR...: the backward's stages alone (gdn_benchmark_stages_alone of the
# bench binaries named by the shell variables VAR...), alternating as dev_fwd_ab does.
dev_bwd_stages_ab() {
  local rounds=$1 r who; shift
  for ((r = 0; r < rounds; r++)); do
    for who in "$@"; do
      DNNPLAN_GDN_BENCH_ALONE=1 timeout 40 "${!who}" gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 \
        | grep -E "BENCH alone|panicked" | sed -E "s/^test gdn_benchmark_stages_alone \.\.\. //; s/^/$who /"
    done
  done
}

# dev_stage NAME: the preamble of a staged device call, run from the root of the checkout the run
# tool sent: DEV_OUT=${OUT:-/tmp/NAME} (the summary), DEV_LOGS=/tmp/NAME-logs (fresh; the step
# logs), .xfer-final/device.txz unpacked, .device/device-env.sh sourced (its output to
# $DEV_LOGS/env.log), the comparison binaries under .device/base and .device/alt made executable.
dev_stage() {
  DEV_OUT=${OUT:-/tmp/$1}
  DEV_LOGS=/tmp/$1-logs
  mkdir -p "$DEV_OUT" && rm -rf "$DEV_LOGS" && mkdir -p "$DEV_LOGS"
  tar xf .xfer-final/device.txz
  source .device/device-env.sh > "$DEV_LOGS/env.log" 2>&1
  chmod +x .device/base/* .device/alt/* 2> /dev/null
  return 0
}

# dev_step NAME CMD...: CMD's output to $DEV_LOGS/NAME.log, then "== NAME (S s)" and that log
# appended to $DEV_OUT/summary.txt and every log so far packed into $DEV_OUT/logs.tgz (a call cut
# short still brings back the steps that ran).
dev_step() {
  local name=$1 t0; shift
  t0=$(date +%s)
  "$@" > "$DEV_LOGS/$name.log" 2>&1
  { echo "== $name ($(( $(date +%s) - t0 )) s)"; cat "$DEV_LOGS/$name.log"; } >> "$DEV_OUT/summary.txt"
  tar czf "$DEV_OUT/logs.tgz" -C "$DEV_LOGS" . 2> /dev/null
}

# ---- The one pass's harness and packs (sessions 52-59's device scripts) ----------------------
# These run from a checkout's root (no staging needed): the harness is built on the device from
# bench/gdn_fused16_bench.cu, the product's test binaries come as packs (`.device/` tarballs built
# on the CPU machine and carried in `.xfer-tests68/`, unpacked to /tmp/NAME).

# dev_elapsed: "elapsed S s" since the script's T0 (dev_f16_begin sets it).
dev_elapsed() { echo "elapsed $(( $(date +%s) - ${T0:-$(date +%s)} )) s"; }

# dev_bench_nvcc NAME BIN [NVCC FLAG...]: bench/NAME.cu into $DEV_TMP/BIN for sm_90a (build log
# $DEV_TMP/BIN.build); nvcc's status.
dev_bench_nvcc() {
  local name=$1 bin=$2; shift 2
  nvcc -std=c++17 -O3 "$@" -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench "bench/$name.cu" \
    -o "$DEV_TMP/$bin" > "$DEV_TMP/$bin.build" 2>&1
}

# dev_bench_build NAME [NVCC FLAG...]: dev_bench_nvcc into $DEV_TMP/NAME; on failure one "BUILD
# FAILED NAME" line and the log's tail. Several may run in the background at once
# (`dev_bench_build a & dev_bench_build b & wait`).
dev_bench_build() {
  local name=$1; shift
  dev_bench_nvcc "$name" "$name" "$@" || { echo "BUILD FAILED $name"; tail -5 "$DEV_TMP/$name.build"; }
}

# dev_f16_begin [build]: a one-pass device script's preamble: T0 for dev_elapsed, one line naming
# the GPU, driver and SM clock; with `build`, the harness built (dev_f16_build) and the time so far.
dev_f16_begin() {
  T0=$(date +%s)
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  if [ "${1:-}" = build ]; then
    dev_f16_build
    dev_elapsed
  fi
}

# dev_f16_build [NVCC FLAG...]: the harness into $DEV_TMP/f16bench (build log $DEV_TMP/f16bench.build).
dev_f16_build() {
  dev_bench_nvcc gdn_fused16_bench f16bench "$@"
  ls -la "$DEV_TMP/f16bench" | cut -c1-80
}

# The harness binary dev_f16_checks and dev_f16_rounds run: F16BENCH, default dev_f16_build's.
dev_f16_bin() { echo "${F16BENCH:-$DEV_TMP/f16bench}"; }

# dev_f16_checks [ENTRY_RE] [TAG]: every CHECK of the harness (log $OUT/harness_checks.log, or
# harness_checks_TAG.log); prints the count of CHECKs ok, any FAIL, the summary line and the ENTRY
# lines whose name matches ENTRY_RE.
dev_f16_checks() {
  local log="$OUT/harness_checks${2:+_$2}.log"
  chmod +x "$(dev_f16_bin)" 2> /dev/null
  FUSED16_ONLY=none timeout 120 "$(dev_f16_bin)" 20 > "$log" 2>&1
  echo "harness checks rc=$?"
  grep -cE "^CHECK.* ok$" "$log"
  grep -E "CHECK.*FAIL|all checks|FAILED" "$log" | cut -c1-150 | head -12
  [ -n "${1:-}" ] && grep -E "^ENTRY ($1)" "$log" | cut -c1-150
  return 0
}

# dev_f16_rounds ENTRIES [ROUNDS] [VAR=VALUE ...]: the harness's timings of the comma-separated
# ENTRIES at the four benchmark shapes, ROUNDS (default 2) rounds, each round all entries in turn.
dev_f16_rounds() {
  local entries=$1 rounds=${2:-2} rep
  shift 2 2> /dev/null || shift $#
  for rep in $(seq "$rounds"); do
    env FUSED16_ONLY="$entries" "$@" timeout 90 "$(dev_f16_bin)" 20 2>&1 | grep "^FUSED16" | cut -c1-64
  done
}

# dev_f16_bins_rounds DIR "A B ..." ENTRIES [ROUNDS]: the harness binaries DIR/f16bench_A,
# DIR/f16bench_B, ... in turn, ROUNDS (default 3) rounds of one dev_f16_rounds of ENTRIES each, every
# line prefixed "A rN ", and the script's elapsed seconds after each round.
dev_f16_bins_rounds() {
  local dir=$1 bins=$2 entries=$3 rounds=${4:-3} r b
  chmod +x "$dir"/f16bench_*
  for r in $(seq "$rounds"); do
    for b in $bins; do
      F16BENCH="$dir/f16bench_$b" dev_f16_rounds "$entries" 1 | sed "s/^/$b r$r /"
    done
    echo "elapsed $SECONDS s"
  done
}

# dev_f16_bins_checks DIR "A B ..." [ENTRY_RE]: dev_f16_checks of the harness binaries DIR/f16bench_A,
# DIR/f16bench_B, ... in turn (logs harness_checks_A.log, ...), then the script's elapsed seconds.
dev_f16_bins_checks() {
  local dir=$1 bins=$2 re=${3:-} b
  for b in $bins; do
    echo "== harness checks, $b"
    F16BENCH="$dir/f16bench_$b" dev_f16_checks "$re" "$b"
  done
  echo "elapsed $SECONDS s"
}

# dev_pack_same WHICH A B LABEL [VAR=VALUE ...]: the hashes (dev_hashes WHICH: fwd, forward_parity;
# bwd, backward_parity) of the packs in /tmp/A and /tmp/B (their gpu_gdn, under B's device-env.sh
# and the given environment) compared by dev_same.
dev_pack_same() (
  local which=$1 a=$2 b=$3 label=$4
  shift 4
  source "/tmp/$b/.device/device-env.sh" > /dev/null 2>&1
  dev_hashes "$which" "$(ls /tmp/$a/.device/tests/gpu_gdn-* | head -1)" "$@" > "$DEV_TMP/h_$a"
  dev_hashes "$which" "$(ls /tmp/$b/.device/tests/gpu_gdn-* | head -1)" "$@" > "$DEV_TMP/h_$b"
  dev_same "$DEV_TMP/h_$a" "$DEV_TMP/h_$b" "$label ($(wc -l < "$DEV_TMP/h_$a") lines)"
)
# dev_pack_fwd_same A B LABEL [VAR=VALUE ...]: dev_pack_same fwd.
dev_pack_fwd_same() { dev_pack_same fwd "$@"; }

# dev_packs_begin TAG DIR NAME:TXZ ...: dev_f16_begin, DEV_TMP=/tmp/TAG, then each pack DIR/TXZ
# unpacked into /tmp/NAME (dev_pack).
dev_packs_begin() {
  local tag=$1 dir=$2 pk; shift 2
  dev_f16_begin
  DEV_TMP=/tmp/$tag && mkdir -p "$DEV_TMP"
  for pk in "$@"; do DEV_PACKS=$dir dev_pack "${pk%%:*}" "${pk#*:}"; done
}

# dev_pack NAME TXZ: unpacks $DEV_PACKS/TXZ (a `.device/` pack; DEV_PACKS default .xfer-tests68)
# into /tmp/NAME.
dev_pack() { mkdir -p "/tmp/$1" && tar xJf "${DEV_PACKS:-.xfer-tests68}/$2" -C "/tmp/$1"; }

# dev_pack_tests NAME: gpu_gdn (log $OUT/gpu_gdn.log) and gpu_gdn_pdl (log $OUT/gpu_gdn_pdl.log)
# of the pack in /tmp/NAME under its device-env.sh, one summary block each.
dev_pack_tests() (
  source "/tmp/$1/.device/device-env.sh" > /dev/null 2>&1
  timeout 170 "$(ls /tmp/$1/.device/tests/gpu_gdn-* | head -1)" --test-threads=1 > "$OUT/gpu_gdn.log" 2>&1
  echo "gpu_gdn rc=$?"; grep -E "test result|panicked|FAILED" "$OUT/gpu_gdn.log" | head -20
  timeout 30 "$(ls /tmp/$1/.device/tests/gpu_gdn_pdl-* | head -1)" --test-threads=1 > "$OUT/gpu_gdn_pdl.log" 2>&1
  echo "gpu_gdn_pdl rc=$?"; grep "test result" "$OUT/gpu_gdn_pdl.log"
)

# dev_pack_fwd_packs "A B ..." [SHAPES] [ROUNDS]: the forward by rule through the product
# (gdn_benchmark_ours) of the packs in /tmp/A, /tmp/B, ..., alternating, ROUNDS (default 2) rounds at
# the benchmark shapes SHAPES (default "0 2 3": the one pass's), under the last pack's device-env.sh.
# DEV_BENCH_RE (default "BENCH ours fwd ") picks the lines shown: "BENCH ours (fwd|bwd|train) " adds
# the backward and the training step the same runs time. Each run's whole output is kept as
# $DEV_TMP/ours_<the packs joined by ->_<pack>_<round>.log (a second call in another order keeps its own).
# DEV_BENCH_SCHEDULES (default "default:::": by rule) is the benchmark's schedule list
# (DNNPLAN_GDN_BENCH_SCHEDULES, e.g. "default:::,p4::4" adds the forward at 4 pieces).
dev_pack_fwd_packs() (
  local shapes=${2:-0 2 3} rounds=${3:-2} rep pk b last order log
  order=$(echo $1 | tr ' ' '-')
  for pk in $1; do last=$pk; done
  source "/tmp/$last/.device/device-env.sh" > /dev/null 2>&1
  for rep in $(seq "$rounds"); do
    for pk in $1; do
      b=$(ls /tmp/$pk/.device/tests/gpu_gdn_bench-* | head -1)
      log=$DEV_TMP/ours_${order}_${pk}_$rep.log
      DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="${DEV_BENCH_SCHEDULES:-default:::}" DNNPLAN_GDN_BENCH_SHAPES="$shapes" \
        timeout "${DEV_BENCH_CAP_S:-60}" "$b" gdn_benchmark_ours --test-threads=1 --nocapture > "$log" 2>&1
      echo "== product $pk round $rep rc=$?"
      grep -E "${DEV_BENCH_RE:-BENCH ours fwd }" "$log" | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-110
    done
  done
)
# dev_pack_fwd_rule_and_form A B RULE_SHAPES FORM FORM_SHAPES ROUNDS TAG: dev_pack_fwd_packs of
# packs A and B by rule at RULE_SHAPES, then with the one pass's FORM forced
# (DNNPLAN_GDN_FWD_FUSED) at FORM_SHAPES, ROUNDS rounds each; logs $OUT/TAG_fwd_rule.log and
# $OUT/TAG_fwd_FORM.log, the elapsed seconds after each.
dev_pack_fwd_rule_and_form() {
  local a=$1 b=$2 rule=$3 form=$4 fshapes=$5 rounds=$6 tag=$7
  echo "== the forward by rule: $a, $b"
  dev_pack_fwd_packs "$a $b" "$rule" "$rounds" 2>&1 | tee "$OUT/${tag}_fwd_rule.log"
  dev_elapsed
  echo "== $form forced"
  DNNPLAN_GDN_FWD_FUSED=$form dev_pack_fwd_packs "$a $b" "$fshapes" "$rounds" 2>&1 | tee "$OUT/${tag}_fwd_$form.log"
  dev_elapsed
}
# dev_pack_fwd_ab A B [SHAPES] [ROUNDS]: dev_pack_fwd_packs of the two packs A and B.
dev_pack_fwd_ab() { dev_pack_fwd_packs "$1 $2" "${3:-0 2 3}" "${4:-2}"; }
