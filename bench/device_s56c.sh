#!/usr/bin/env bash
# Session 56's second device call (H200; after bench/device_s56b.sh measured the first DD 1-7 %
# slower on an H100: its update's K̂ loads and reciprocal waited behind the rescale branch): the same
# four steps as bench/device_s56b.sh on a DD pack whose factors and K̂ fragments are formed ahead of
# the U product (device69.txz rebuilt from that source; the sources are bench/gdn_dd56_deferred_decay.patch).
# run: command "bash bench/device_s56c.sh", kind nvidia-h200, carry [".xfer-tests68", ".xfer-final"].
exec bash "$(dirname "$0")/device_s56b.sh"
