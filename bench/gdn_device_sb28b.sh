# Session 28 (helper sb28), call 2: the flip commit (BWD_PREP_FORM_BY_RULE = Slim) at default:
# backward_parity's hashes == run 1's PREP=slim hashes (bench/gdn_device_sb28_h_slim.txt), ==
# PREP=slim of this build; gpu_gdn backward tests at default.
# Command: `cd .xfer-sb28 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_sb28b.sh`.
source bench/device_lib.sh
dev_begin sb28b
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
echo "binary: T $t (flip)"
DEV_CAP_S=30 dev_bwd_case def $t
dev_same $d/h_def bench/gdn_device_sb28_h_slim.txt "T flip default == run 1 PREP=slim, $(wc -l < $d/h_def) hash lines"
cp $d/h_def $OUT/h_def_flip.txt
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 20 ] && DEV_CAP_S=45 dev_parity "gpu_gdn backward (flip default)" $t backward
echo "elapsed ${SECONDS}s"
echo done
