#!/usr/bin/env bash
# How a trained ReversedAddition policy fails (PROTOCOL.md addendum 6). For every first column
# (a, b) of a width-2 input, with a second column fixed by (a, b) (c = 5a + 7b + 3, d = 11a + 3b + 1,
# both mod the base: every digit and carry case is met), plays the greedy
# policy of the run's last checkpoint (pcl play --run) and sorts the episode by its rewards:
# first digit right, both right, and each failure as a wrong write (-0.5) or a time-out (-1).
#
#   bash docs/results/hardest-tasks/probe/failures.sh PCL RUN...
#
# PCL: the stamped binary that trained the runs; RUN: run directories with their checkpoint.bin
# (under $HOME/runs/hardest-tasks; the committed copies keep no checkpoints, and a run reproduces
# bit for bit from its config.json).
set -euo pipefail
pcl=$1; shift
for run in "$@"; do
  base=$(sed -nE 's/.*"base": *([0-9]+).*/\1/p' "$run/config.json" | head -1)
  log=$(for a in $(seq 0 $((base - 1))); do for b in $(seq 0 $((base - 1))); do
    c=$(((5 * a + 7 * b + 3) % base)) d=$(((11 * a + 3 * b + 1) % base))
    "$pcl" play --run "$run" --delay 1ms --input "$a,$b;$c,$d" --episodes 1 2>&1 |
      grep -oE 'reward [-+][0-9.]+' | awk '$2 != "+0.0" {printf "%s ", $2} END {print ""}'
  done; done)
  n=$((base * base))
  count() { grep -cE "^$1" <<<"$log" || true; }
  printf '%s: first right %d/%d, both right %d; failures: first column wrong write %d, time-out %d; second column wrong write %d, time-out %d\n' \
    "${run##*/}" "$(count '\+1.0')" "$n" "$(count '\+1.0 \+1.0')" "$(count '-0.5')" "$(count '-1.0')" \
    "$(count '\+1.0 -0.5')" "$(count '\+1.0 -1.0')"
done
