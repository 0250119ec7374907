#!/usr/bin/env bash
# Times README's quick-start command 1 on this machine, part by part, on a fresh clone of this
# checkout (committed files only) in a temp folder: npm ci, npm run build, goodput compare on
# workload-1. Prints each part's wall time with the machine's cores and load average before and
# after, since a shared machine's load changes the figure several-fold. Usage: npm run bench:quickstart
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/goodput-quickstart-XXXXXX")
trap 'rm -rf "$dir"' EXIT
git clone -q "$root" "$dir/goodput"
cd "$dir/goodput"
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "cores $(nproc), load average before: $(load)"
part() {
  local name=$1; shift
  local start=$SECONDS
  "$@" > "$dir/$name.log" 2>&1 || { echo "$name failed:"; tail -20 "$dir/$name.log"; exit 1; }
  echo "$name: $((SECONDS - start)) s (load average now $(load))"
}
part 'npm ci' npm ci
part 'npm run build' npm run build
part 'compare workload-1' node dist/src/cli/main.js compare --workload data/pollux/workloads/workload-1.csv
echo "total: $SECONDS s"
