#!/bin/bash
# Session 29 (helper m029, td29's M0): the one device call. Runs from .xfer-m029/ (staged by
# helper m029: the self-test binaries built with nvcc 13.0 sm_90a + static cudart, their sources
# for a rebuild there if the carried binary cannot start). Prints the self-tests' PASS / FAIL lines,
# then compute-sanitizer memcheck / synccheck / racecheck on the small run. Budget: <= 100 s.
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
exec > >(tee "$OUT/m029_run1.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
B=./dnnp_async_selftest
timeout 40 $B > /tmp/m029_st.txt 2>&1; rc=$?
cat /tmp/m029_st.txt
echo "dnnp_async_selftest rc $rc"
if ! grep -qE "^(PASS|FAIL) wgmma" /tmp/m029_st.txt; then
  echo "carried binary ran no check -- rebuilding here"
  nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O2 -Isrc -o /tmp/dnnp_async_selftest src/dnnp_async_selftest.cu 2>&1 | grep -v C7520 | tail -5
  B=/tmp/dnnp_async_selftest
  [ $SECONDS -lt 60 ] && { timeout 30 $B; echo "dnnp_async_selftest (rebuilt) rc $?"; }
fi
[ $SECONDS -lt 70 ] && { timeout 15 ./gdn_wgmma_selftest; echo "gdn_wgmma_selftest (regression, RS forms) rc $?"; }
for tool in memcheck synccheck racecheck; do
  [ $SECONDS -lt 80 ] || { echo "skipped $tool (time)"; continue; }
  echo "== compute-sanitizer --tool $tool $B small"
  timeout 18 compute-sanitizer --tool $tool $B small 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error|Hazard|FAIL|selftest:" | head -12
done
echo "total ${SECONDS} s"
