# Session 12 (helper prune12), one call: the pruned cubins (only what a rule picks plus one bitwise
# witness per family). All GDN GPU tests with the defaults, parity with every kept switch, the
# default's hashes against all of bench/gdn_hashes_session9.txt, BITWISE default vs each witness
# (prep v14, tokens tc11, overlapped reverse scan ov, replay v1) and vs the kept rule switches, the
# retired switch values (now the default), memcheck of both directions. Staged by hand into
# .xfer-prune12 (device.tgz: .device with gpu_gdn + gpu_gdn_pdl, bench/device_lib.sh, the hash
# file, cubins.sha256); run as: cd .xfer-prune12 && bash gdn_device_prune12.sh
set -u
tar xzf device.tgz && source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
S=$OUT/summary.log
start=$(date +%s); left() { echo $(( ${BUDGET_S:-150} - ($(date +%s) - start) )); }
say() { echo "$*" | tee -a $S; }
say "$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
say "$(cat cubins.sha256)"
t=$(dev_bin gpu_gdn); p=$(dev_bin gpu_gdn_pdl)
say "staged: $t $p"
# 1. Every GDN GPU test with the defaults.
say "default gpu_gdn: $(timeout 60 $t --test-threads=1 2>&1 | grep -E 'test result|panicked' | head -2 | tr '\n' ' ')"
say "default gpu_gdn_pdl: $(timeout 40 $p --test-threads=1 2>&1 | grep -E 'test result|panicked' | head -2 | tr '\n' ' ')"
# 2. Parity under each kept switch.
say "$(dev_parity 'all gpu_gdn, DNNPLAN_GDN_FWD_PREP=v14' $t '' DNNPLAN_GDN_FWD_PREP=v14)"
for v in "DNNPLAN_GDN_BWD_TOKENS=tc11" "DNNPLAN_GDN_BWD_DSCAN=ov" "DNNPLAN_GDN_BWD_FSCAN=v1" \
         "DNNPLAN_GDN_BWD_TOKENS=tc11 DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4"; do
  say "$(dev_parity "backward_parity $v" $t backward_parity $v)"
done
# 3. Hashes: the default vs the session-9 file, then default vs each switch (same build).
d=$DEV_TMP
dev_hashes bwd $t > $d/h_def; dev_hashes fwd $t > $d/f_def
say "hash lines: bwd $(wc -l < $d/h_def), fwd $(wc -l < $d/f_def)"
say "$(dev_cover_reference 'default, this build' $d/h_def $d/f_def)"
hb() { local label=$1; shift; dev_hashes bwd $t "$@" > $d/h_x; say "$(dev_same $d/h_x $d/h_def "bwd $label == default")"; }
hf() { local label=$1; shift; dev_hashes fwd $t "$@" > $d/f_x; say "$(dev_same $d/f_x $d/f_def "fwd $label == default")"; }
hb "prep v14 (witness)" DNNPLAN_GDN_FWD_PREP=v14
hf "prep v14 (witness)" DNNPLAN_GDN_FWD_PREP=v14
hb "tokens tc11 (witness, overlapped by rule)" DNNPLAN_GDN_BWD_TOKENS=tc11
hb "reverse scan ov (witness)" DNNPLAN_GDN_BWD_DSCAN=ov
hb "replay v1 (witness)" DNNPLAN_GDN_BWD_FSCAN=v1
hb "overlap off (dscan_io / dscan_w8 by rule)" DNNPLAN_GDN_BWD_OVERLAP=0
hb "tokens tc11, overlap off" DNNPLAN_GDN_BWD_TOKENS=tc11 DNNPLAN_GDN_BWD_OVERLAP=0
hb "dscan v1 (4 warps)" DNNPLAN_GDN_BWD_DSCAN=v1
hb "dscan w8" DNNPLAN_GDN_BWD_DSCAN=w8
hf "scan w8 forced" DNNPLAN_GDN_FWD_SCAN=w8
hf "scan w4 forced" DNNPLAN_GDN_FWD_SCAN=w4
# Retired switch values now select the default (without the overlap for an unknown token stage).
hb "retired TOKENS=tc5 (default stage, no overlap)" DNNPLAN_GDN_BWD_TOKENS=tc5
hb "retired TOKENS=fp32" DNNPLAN_GDN_BWD_TOKENS=fp32
hb "retired FWD_PREP=v7" DNNPLAN_GDN_FWD_PREP=v7
hf "retired FWD_PREP=v9" DNNPLAN_GDN_FWD_PREP=v9
hf "retired FWD_SCAN=v1" DNNPLAN_GDN_FWD_SCAN=v1
# Pieces: witnesses against the default with 4 pieces forced.
dev_hashes bwd $t DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 > $d/h_p4
for v in DNNPLAN_GDN_BWD_TOKENS=tc11 DNNPLAN_GDN_BWD_DSCAN=ov DNNPLAN_GDN_BWD_FSCAN=v1 DNNPLAN_GDN_FWD_PREP=v14; do
  dev_hashes bwd $t DNNPLAN_GDN_BWD_OVERLAP=1 DNNPLAN_GDN_BWD_PIECES=4 $v > $d/h_x
  say "$(dev_same $d/h_x $d/h_p4 "bwd 4 pieces overlapped, $v == default")"
done
cp $d/h_def $OUT/hashes_bwd_default.txt; cp $d/f_def $OUT/hashes_fwd_default.txt
# 4. memcheck, both directions, the defaults (time permitting).
[ "$(left)" -gt 40 ] && say "$(DEV_CAP_S=$(( $(left) / 2 )) dev_memcheck $t backward_parity)"
[ "$(left)" -gt 20 ] && say "$(DEV_CAP_S=$(( $(left) - 5 )) dev_memcheck $t forward_parity)"
say "elapsed $(( $(date +%s) - start )) s"
