# Sourced by the experiment scripts that run pcl sweeps (scripts/large-actions,
# scripts/figure1-levers): restore, save and sweep, with PCL the pcl binary.
#
# Run directories do not outlive the machine; docs/results keeps each finished run's config,
# metrics and provenance. restore copies those into a sweep replanned on a fresh machine (pcl sweep
# counts a run whose metrics reach its budget as finished without its checkpoint, and never trains
# it again), so that only the missing runs are run; save copies the finished runs back.
restore() { # sweep-dir results-dir
  local r
  for r in "$2"/runs/*/; do
    [ -d "$r" ] || continue
    r=${r%/}
    [ -e "$1/runs/${r##*/}" ] || { mkdir -p "$1/runs" && cp -r "$r" "$1/runs/"; }
  done
}
save() { # sweep-dir results-dir
  local r iters
  for r in "$1"/runs/*/; do
    r=${r%/}
    [ -f "$r/config.json" ] && [ -f "$r/metrics.csv" ] || continue
    iters=$(grep -o '"iters": *[0-9]*' "$r/config.json" | grep -o '[0-9]*$')
    [ "$(tail -n +2 "$r/metrics.csv" | wc -l)" -ge "$iters" ] || continue
    mkdir -p "$2/runs/${r##*/}"
    cp "$r"/{config.json,metrics.csv,run.json} "$2/runs/${r##*/}/"
  done
}
# pinned binary: fails unless the binary carries the VCS stamp of a clean tree, so that every
# run.json names the commit that built it (go build -buildvcs=true in a clean clone; GOFLAGS may
# say -buildvcs=false, and a git worktree gives no stamp).
pinned() {
  local info
  command -v go >/dev/null || scripts/setup --go >&2
  info=$(go version -m "$1") || { echo "sweep: cannot read the build of $1" >&2; return 2; }
  if ! grep -q $'\tvcs.revision=' <<<"$info" || ! grep -q $'\tvcs.modified=false' <<<"$info"; then
    echo "sweep: $1 has no clean VCS stamp; build it with go build -buildvcs=true in a clean clone" >&2
    return 2
  fi
}
# sweep sweep-dir results-dir [pcl sweep run flags]: restore, run, save and report (with
# REPORT_PCL when set). While the sweep runs, its finished runs are also saved every SAVE_EVERY
# seconds (default 300), so that a machine that stops mid-sweep has lost none of them.
sweep() {
  local dir=$1 out=$2
  shift 2
  local rc=0 saver
  pinned "$PCL" || return
  restore "$dir" "$out"
  # $$ is this script's shell: the loop ends with it, however it ends.
  (while sleep "${SAVE_EVERY:-300}" && kill -0 $$ 2>/dev/null; do save "$dir" "$out"; done) &
  saver=$!
  "$PCL" sweep run --dir "$dir" "$@" || rc=$? # interrupted or a run failed: keep what finished
  kill "$saver" 2>/dev/null || true
  wait "$saver" 2>/dev/null || true
  save "$dir" "$out"
  # The report reads the runs only: REPORT_PCL (default PCL) may be a newer build, so that a stage
  # pinned to an old binary is reported by today's rules (the sample std, say).
  "${REPORT_PCL:-$PCL}" sweep report --dir "$dir" --out "$out"
  return "$rc"
}
