#!/usr/bin/env bash
# The runs of README.md here: Reverse |A| = 16 (base 4) at the small stage's configuration
# (docs/results/figure1-levers: weight 0.025, embeddings 0.1, 1,000 iterations) under each lever
# set, on the selection seeds 101-103, both algorithms (each lever alone as a sweep per algorithm).
# Resumable; run from the repository root with a pinned binary (PCL, here the small stage's
# db317aa). Run directories under RUNS, finished runs and each sweep's report copied here.
set -euo pipefail
cd "$(dirname "$0")/../../.."
PCL=${PCL:?a pcl binary (go build -buildvcs=true -o ... ./cmd/pcl)}
RUNS=${RUNS:-$HOME/runs/diag-reverse16}
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Zen}
# shellcheck source=scripts/lib/sweep.sh
source scripts/lib/sweep.sh
# Each sweep: name (the lever set, with -soft for soft PCL's single levers, run after sparse PCL's).
for name in none both advantage explore advantage-soft explore-soft; do
  case $name in
    none) levers=() algos=sparse,soft who= ;;
    both) levers=(--replay-priority advantage --replay-alpha 2 --explore 0.3 --explore-share 0.5 --explore-temp 3) algos=sparse,soft who= ;;
    advantage*) levers=(--replay-priority advantage --replay-alpha 2) ;;
    explore*) levers=(--explore 0.3 --explore-share 0.5 --explore-temp 3) ;;
  esac
  case $name in
    *-soft) algos=soft who="soft, " ;;
    advantage|explore) algos=sparse who="sparse, " ;;
  esac
  [ -f "$RUNS/$name/manifest.json" ] || "$PCL" sweep plan --out "$RUNS/$name" --name "Reverse 16 diagnostic: levers ${name%-soft} (${who}seeds 101-103, 1000 iterations)" \
    --embed-std 0.1 --eval-every 20 --checkpoint-every 50 "${levers[@]}" --seed 101 --seeds 3 \
    --envs Reverse-v0 --actions Reverse-v0:16 --algos "$algos" --sparse-alphas Reverse-v0:0.025 --soft-alphas Reverse-v0:0.025 --iters 1000
  sweep "$RUNS/$name" "docs/results/diag-reverse16/$name" --jobs 2
done
