#!/usr/bin/env bash
# Session 31 (helper rc31): settle the open racecheck reports (bench/RESULTS.md "Open: racecheck").
# One call, <= 90 s of command (SECONDS-gated, every step under `timeout`), own folder $OUT/rc31/.
# Staged (/work/main/.xfer-rc31/device.txz, built by rc31 on branch rc31):
#   dnnp_async_selftest_li   bench/dnnp_async_selftest.cu of branch rc31, nvcc 13.0.88, -lineinfo,
#                            sm_90a, static cudart (its `ring REL MODE GRID NT REPS` mode)
#   .device/tests/gpu_gdn-*  main 5f14dfe's gpu_gdn (/work/base31; rc31 changes no kernel, no Rust)
#   .device/device-env.sh, bench/device_lib.sh, this script, bench/rc31_race_pairs.py with
#   bench/gdn_rc31_tok_sass.txt (the two token kernels' shared accesses and syncs, SASS), and the
#   self-test's sources (bench/dnnp_async_selftest.{cu,h}, kernels/include/dnnp_{async,wgmma}.cuh)
# Optional (/work/main/.xfer-rc31/newsan.txz, extracted by this script when present): a newer
# compute-sanitizer (the pip wheel nvidia-cuda-sanitizer-api 13.4.92) for a cross-check of the same
# binaries; its steps run only if it is there and time is left.
# Command: `cd .xfer-rc31 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_rc31.sh`.
#
# Steps (compute-sanitizer of the machine's CUDA 13.0 unless said otherwise):
#   1. the ring's four release variants without a tool at 264 blocks x 64 tiles (PASS lines);
#   2. racecheck, hazard reports, one process per release variant and copy mode, 1 block x 5 tiles
#      (tile 4 refills slot 0 once: 256 consumer threads x 16 B can conflict): hazard counts and the
#      consumer threads that appear as readers (RC lines);
#   3. racecheck of the token stage, tc16 then tw1, the filter tw1 had in session 30
#      (--kernel-name kns=tokens_<tile>, backward_parity --test-threads=1) plus --launch-count 1
#      so that it ends (one checked launch, the rest run unchecked);
#   2b. step 2 in bulk-copy mode;
#   4. as time allows: the newer sanitizer (2026.3, if staged) on the elected ring and on tw1,
#      racecheck of the ring as session 30 ran it (4 blocks x 16 tiles, both modes: 380,930 errors
#      then), synccheck of tw1 (one launch).
# Step 2 runs copy mode 0 (cp.async, session 30's reports) before step 3, mode 1 after it.
set -uo pipefail
OUT=${OUT:-/tmp}/rc31; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin rc31
chmod +x .device/tests/* dnnp_async_selftest_li 2>/dev/null
CAP=88  # seconds of command in all
B=./dnnp_async_selftest_li
t=$(dev_bin gpu_gdn)
CS=compute-sanitizer
left() { echo $((CAP - SECONDS)); }
# cap_s WANT: WANT seconds, or what is left of the call minus 2, whichever is smaller (>= 1)
cap_s() { local l=$(( $(left) - 2 )); [ "$l" -lt "$1" ] && echo $(( l > 1 ? l : 1 )) || echo "$1"; }
echo "binaries: selftest $B, gpu_gdn $t"
echo "sanitizer: $(timeout 10 $CS --version 2>&1 | tail -1)"
timeout 10 $CS --help 2>&1 | grep -iE "^ +--(racecheck|num-cuda-barriers)" > "$OUT/racecheck_options.txt"
echo "racecheck options of this version: $(grep -oE -- '--[a-z-]+' "$OUT/racecheck_options.txt" | tr '\n' ' ')"
probe=$(timeout 10 "$B" ring 0 0 1 1 1 2>&1)
if ! grep -qE "^(PASS|FAIL) ring release" <<< "$probe"; then
  echo "staged self-test did not start: rebuilding here"
  timeout 40 nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O2 -lineinfo -Ikernels/include -Ibench \
    -o /tmp/dnnp_async_selftest_li bench/dnnp_async_selftest.cu > "$OUT/rebuild.log" 2>&1
  B=/tmp/dnnp_async_selftest_li
fi
echo "elapsed ${SECONDS}s"

# 1. the variants without a tool (correctness; 5 launches per mode)
for rel in 0 1 2 3; do
  timeout 15 "$B" ring $rel 2 264 64 5 > "$OUT/ring_plain_$rel.log" 2>&1
  echo "plain rc=$? $(grep -E '^(PASS|FAIL) ring release' "$OUT/ring_plain_$rel.log") $(grep -c '^FAIL' "$OUT/ring_plain_$rel.log") FAIL lines"
done
echo "elapsed ${SECONDS}s"

# 2. racecheck per release variant and copy mode. RC line: hazards by kind, the summary, and the
# consumer threads (128..383) that appear as readers / never appear (lane 0 of a warp = tid % 32 0).
rc_ring() {  # TAG SANITIZER REL MODE GRID NT
  local tag=$1 cs=$2 rel=$3 mode=$4 grid=$5 nt=$6 log="$OUT/rc_$1.log"
  timeout "$(cap_s 15)" "$cs" --tool racecheck --racecheck-report hazard --print-limit 0 "$B" ring "$rel" "$mode" "$grid" "$nt" 1 \
    > "$log" 2>&1
  local rc=$?
  local readers
  readers=$(grep -oE "Read Thread \([0-9]+" "$log" | grep -oE "[0-9]+$" | sort -n | uniq)
  local absent
  absent=$(for x in $(seq 128 383); do echo "$readers" | grep -qx "$x" || echo -n "$x "; done)
  echo "RC $tag (rel $rel mode $mode, ${grid}x$nt) rc=$rc: WAR $(grep -c 'Potential WAR' "$log") RAW $(grep -c 'Potential RAW' "$log")" \
    "WAW $(grep -c 'Potential WAW' "$log"); $(grep -oE 'RACECHECK SUMMARY.*' "$log" | tail -1);" \
    "reader threads $(echo "$readers" | grep -c .), consumer threads never a reader: $(echo "$absent" | wc -w)" \
    "[$(echo "$absent" | cut -c1-80)]; writers: $(grep -oE 'Write Thread \([0-9]+' "$log" | sort | uniq | wc -l) threads" \
    "$(grep -oE 'Write Thread \([0-9]+,0,0\) at [^ ]+' "$log" | sed -E 's/.* at //; s/\(.*//' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  grep -E "^(FAIL)" "$log" | head -2
  gzip -f "$log"
}
for rel in 0 1 2 3; do
  [ "$(left)" -gt 64 ] || { echo "time: skip RC rel $rel mode 0"; continue; }
  rc_ring "r${rel}m0" $CS $rel 0 1 5
done
echo "elapsed ${SECONDS}s"

# 3. the token stage: tc16, then tw1, under the filter tw1 had (+ --launch-count 1).
rc_tok() {  # TILE
  local tile=$1 log="$OUT/racecheck_$1.log" cap
  cap=$(cap_s 28)
  [ "$cap" -ge 10 ] || { echo "time: skip racecheck $tile"; return; }
  env DNNPLAN_GDN_BWD_TOKENS=$tile timeout "$cap" $CS --tool racecheck --kernel-name kns=tokens_$tile --launch-count 1 \
    --print-limit 100 "$t" backward_parity --test-threads=1 > "$log" 2>&1
  echo "racecheck $tile rc=$? (cap ${cap}s, kns=tokens_$tile, launch-count 1): $(grep -c 'Race reported' "$log") race records;" \
    "$(grep -oE 'RACECHECK SUMMARY.*' "$log" | tail -1); $(grep -oE 'test result: [a-z]+\. [0-9]+ passed; [0-9]+ failed' "$log")"
  grep -E "Race reported" "$log" | head -3 | cut -c1-160
  python3 bench/rc31_race_pairs.py bench/gdn_rc31_tok_sass.txt "$log" > "$OUT/pairs_$tile.txt" 2>&1 && tail -1 "$OUT/pairs_$tile.txt"
}
rc_tok tc16
echo "elapsed ${SECONDS}s"
rc_tok tw1
echo "elapsed ${SECONDS}s"

# 2b. the same per variant in bulk-copy mode.
for rel in 0 1 2 3; do
  [ "$(left)" -gt 12 ] || { echo "time: skip RC rel $rel mode 1"; continue; }
  rc_ring "r${rel}m1" $CS $rel 1 1 5
done
echo "elapsed ${SECONDS}s"

# 4. as time allows: the newer sanitizer (ring elected, tw1), session 30's ring configuration,
# synccheck of tw1.
if [ -f newsan.txz ] && [ "$(left)" -gt 10 ]; then
  timeout 20 tar xJf newsan.txz && NS=./newsan/compute-sanitizer
  if [ -x "${NS:-}" ]; then
    echo "newer sanitizer: $(timeout 10 $NS --version 2>&1 | tail -1)"
    [ "$(left)" -gt 8 ] && rc_ring new_r0m0 $NS 0 0 1 5
    if [ "$(left)" -gt 16 ]; then
      log="$OUT/racecheck_tw1_new.log"
      env DNNPLAN_GDN_BWD_TOKENS=tw1 timeout "$(cap_s 28)" $NS --tool racecheck --kernel-name kns=tokens_tw1 --launch-count 1 \
        --print-limit 100 "$t" backward_parity --test-threads=1 > "$log" 2>&1
      echo "racecheck tw1 (newer sanitizer) rc=$?: $(grep -c 'Race reported' "$log") race records;" \
        "$(grep -oE 'RACECHECK SUMMARY.*' "$log" | tail -1); $(grep -oE 'test result: [a-z]+\. [0-9]+ passed; [0-9]+ failed' "$log")"
    fi
  fi
fi
if [ "$(left)" -gt 8 ]; then
  timeout "$(cap_s 10)" $CS --tool racecheck --racecheck-report hazard --print-limit 1 "$B" ring 0 2 4 16 1 > "$OUT/rc_s30.log" 2>&1
  echo "RC s30 (rel 0, both modes, 4x16, as session 30) rc=$?: $(grep -oE 'RACECHECK SUMMARY.*' "$OUT/rc_s30.log" | tail -1)"
fi
if [ "$(left)" -gt 10 ]; then
  env DNNPLAN_GDN_BWD_TOKENS=tw1 timeout "$(cap_s 12)" $CS --tool synccheck --kernel-name kns=tokens_tw1 --launch-count 1 \
    --print-limit 20 "$t" backward_parity --test-threads=1 > "$OUT/synccheck_tw1.log" 2>&1
  echo "synccheck tw1 rc=$?: $(grep -oE 'ERROR SUMMARY.*' "$OUT/synccheck_tw1.log" | tail -1) $(grep -m2 -E 'Barrier error|sequence error' "$OUT/synccheck_tw1.log" | tr '\n' ' ' | cut -c1-200)"
fi
gzip -f "$OUT"/racecheck_*.log 2>/dev/null
echo "done ${SECONDS}s"
