#!/bin/bash
# Session 29 (helper m1w29, M1 of td29's design, WIP): a device script for the NEXT session (not run
# in session 29: no device budget). Stage .xfer-NAME/ with the binary gdn_tw_values_selftest (built
# as bench/gdn_tw_values_selftest.cu's header says, sm_90a, static cudart), this script, and
# kernels/include + bench/gdn_tw_values_{test.h,selftest.cu} for a rebuild there. Prints the
# PASS / FAIL lines (bitwise vs tc16's arithmetic), then compute-sanitizer memcheck / racecheck.
# Budget: <= 60 s of command time.
cd "$(dirname "$0")/.."  # the staged root: the binary, bench/, kernels/include/
export PATH=/usr/local/cuda/bin:$PATH
exec > >(tee "$OUT/m1w29_run1.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
B=./gdn_tw_values_selftest
timeout 20 $B > /tmp/m1w29_st.txt 2>&1; rc=$?
cat /tmp/m1w29_st.txt
echo "gdn_tw_values_selftest rc $rc"
if ! grep -qE "^(PASS|FAIL) tw value" /tmp/m1w29_st.txt; then
  echo "carried binary ran no check -- rebuilding here"
  nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -Ikernels/include -Ibench -o /tmp/gdn_tw_values_selftest \
    bench/gdn_tw_values_selftest.cu 2>&1 | grep -v "ptxas info" | tail -5
  B=/tmp/gdn_tw_values_selftest
  [ $SECONDS -lt 40 ] && { timeout 15 $B; echo "gdn_tw_values_selftest (rebuilt) rc $?"; }
fi
for tool in memcheck racecheck; do
  [ $SECONDS -lt 50 ] || { echo "skipped $tool (time)"; continue; }
  echo "== compute-sanitizer --tool $tool $B"
  timeout 20 compute-sanitizer --tool $tool $B 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|FAIL|selftest" | head -8
done
echo "total ${SECONDS} s"
