#!/bin/bash
# The probes and figures of copy-base40-diagnosis.md. Each probe is `pcl diagnose`: the training
# iteration of `pcl train` (batch 400, on-policy step, replay, replay step) on Copy base 40
# (|A| = 160) at the paper's settings unless a flag says otherwise, one seed, 300 iterations,
# every 5th iteration inspected. Run from the repository root after `go build -o bin/pcl ./cmd/pcl`;
# on the project's shared 2-core machine each probe took 1.5 to 8 minutes.
set -e
P="nice -n 10 env GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 bin/pcl diagnose --env Copy-v0 --base 40 --iters 300 --every 5"
O=${O:-probes}
probe() { name=$1; shift; [ -f $O/$name/probe.csv ] || $P --out $O/$name "$@"; }
probe sp005                  --algo sparse --alpha 0.05
probe sp005-s2               --algo sparse --alpha 0.05 --seed 2
probe sp005-pgnone           --algo sparse --alpha 0.05 --pg-scale none
probe sp005-lr0005           --algo sparse --alpha 0.05 --lr 0.0005
probe sp005-recency          --algo sparse --alpha 0.05 --replay-priority recency
probe sp005-percopy          --algo sparse --alpha 0.05 --curriculum per-copy
probe sp005-init0            --algo sparse --alpha 0.05 --logit-init-scale 0
probe sp005-sched            --algo sparse --alpha 0.05 --alpha-start 0.5 --alpha-decay 0.1
probe sp005-nevict           --algo sparse --alpha 0.05 --replay-capacity 120000
probe sp005-nevict-s2        --algo sparse --alpha 0.05 --replay-capacity 120000 --seed 2
probe sp005-gamma1           --algo sparse --alpha 0.05 --gamma 1
probe sp005-gamma1-s2        --algo sparse --alpha 0.05 --gamma 1 --seed 2
probe sp005-gamma1-nevict    --algo sparse --alpha 0.05 --gamma 1 --replay-capacity 120000
probe sp005-gamma099         --algo sparse --alpha 0.05 --gamma 0.99
probe soft0001               --algo soft --alpha 0.001
probe soft0025               --algo soft --alpha 0.025
probe soft0001-gamma1        --algo soft --alpha 0.001 --gamma 1
probe sp005-nevict-expert    --algo sparse --alpha 0.05 --replay-capacity 120000 --expert 400
probe soft0001-nevict-expert --algo soft --alpha 0.001 --replay-capacity 120000 --expert 400
probe sp005-base10           --algo sparse --alpha 0.05 --base 10
# planned for 1500 iterations; stopped by hand (SIGINT) after iteration 600, flat since ~150
probe sp005-gamma1-long      --algo sparse --alpha 0.05 --gamma 1 --iters 1500 --every 25

D=docs/results/copy-base40-diag
ov() { out=$1; metric=$2; shift 2; args=(); for p in "$@"; do args+=(--probe "$p"); done; bin/pcl diagnose --overlay $D-$out.png --metric $metric "${args[@]}"; }
ov write write_frac "sparse s1=$O/sp005" "sparse s2=$O/sp005-s2" "sparse gamma 1=$O/sp005-gamma1" "soft 0.001=$O/soft0001" "soft 0.025=$O/soft0025" "sparse |A|=40=$O/sp005-base10"
ov symbols symbols_in_support "s1=$O/sp005" "s2=$O/sp005-s2" "gamma 1 s1=$O/sp005-gamma1" "gamma 1 s2=$O/sp005-gamma1-s2" "no eviction s1=$O/sp005-nevict" "no eviction s2=$O/sp005-nevict-s2"
ov pcorrect p_correct_given_write "sparse=$O/sp005" "sparse gamma 1=$O/sp005-gamma1" "soft 0.001=$O/soft0001" "soft 0.025=$O/soft0025" "sparse + experts=$O/sp005-nevict-expert" "soft 0.001 + experts=$O/soft0001-nevict-expert"
ov expert mean_reward "sparse + experts=$O/sp005-nevict-expert" "soft 0.001 + experts=$O/soft0001-nevict-expert" "sparse=$O/sp005" "soft 0.001=$O/soft0001"
ov knobs mean_reward "paper settings=$O/sp005" "pg-scale none=$O/sp005-pgnone" "lr 0.0005=$O/sp005-lr0005" "recency replay=$O/sp005-recency" "uniform init=$O/sp005-init0" "alpha 0.5 -> 0.05=$O/sp005-sched"
ov gamma mean_reward "gamma 0.9 s1=$O/sp005" "gamma 0.9 s2=$O/sp005-s2" "gamma 1 s1=$O/sp005-gamma1" "gamma 1 s2=$O/sp005-gamma1-s2" "gamma 0.99=$O/sp005-gamma099" "soft 0.001 gamma 1=$O/soft0001-gamma1"
ov long mean_reward "gamma 1, 600 iterations=$O/sp005-gamma1-long"
ov long-pcorrect p_correct_given_write "gamma 1, 600 iterations=$O/sp005-gamma1-long"
for f in writing weights replay terms; do cp $O/sp005/$f.png $D-baseline-$f.png; done
