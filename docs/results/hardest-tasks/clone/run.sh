#!/usr/bin/env bash
# The cloning figure: the scripted expert cloned with the run's own LSTM (heads and input encoding
# of sparse PCL) at four initial embedding scales, ReversedAddition base 3 and 12 and RepeatCopy
# base 40; 1,500 batches of 64 expert episodes of widths 2-10, evaluated
# every 50 batches. Usage: PCL=path/to/pcl bash docs/results/hardest-tasks/clone/run.sh [out-dir]
set -euo pipefail
PCL=${PCL:-bin/pcl}
out=${1:-docs/results/hardest-tasks/clone}
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Zen}
for spec in "ReversedAddition-v0 3" "ReversedAddition-v0 12" "RepeatCopy-v0 40"; do
  read -r env base <<<"$spec"
  for e in 0.01 0.1 0.3 1; do
    "$PCL" diagnose --clone --env "$env" --base "$base" --embed-std "$e" --batch 64 --iters 1500 --every 50 --seed 101 --out "$out/$env-b$base-e$e"
  done
done
draw() { # png env base
  "$PCL" diagnose --overlay "$out/$1" --metric step_accuracy --probe "std0.01=$out/$2-b$3-e0.01" \
    --probe "std0.1=$out/$2-b$3-e0.1" --probe "std0.3=$out/$2-b$3-e0.3" --probe "std1=$out/$2-b$3-e1"
}
draw reversed-addition-base3-step-accuracy.png ReversedAddition-v0 3
draw reversed-addition-base12-step-accuracy.png ReversedAddition-v0 12
draw repeat-copy-base40-step-accuracy.png RepeatCopy-v0 40
