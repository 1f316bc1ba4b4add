#!/usr/bin/env bash
# bench/eval_latency.sh [PROBLEM] [KERNEL] [WORLD]: where the seconds of one whole
# `kforge eval` go: cold (empty build cache: candidate and baseline both compiled), the
# same eval twice cached, then "new" (an edited kernel: only the candidate compiles, the
# baseline is cached; what each turn of a solve costs).
# Prints each run's stages (from the verdict's "seconds") and its wall time.
# Usage on the GPU machine: bench/eval_latency.sh all_reduce problems/all_reduce/examples/uva.cu 1
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kforge="${KFORGE:-$root/build/kforge}"
problem="${1:-all_reduce}"
if [ -e /dev/nvidia0 ] || [ -e /dev/nvidiactl ]; then ex=uva.cu; else ex=host.cpp; fi
kernel="${2:-$root/problems/$problem/examples/$ex}"
world="${3:-1}"
export KFORGE_CACHE="$(mktemp -d)/cache"   # a cold cache for the first run
out="$(mktemp -d)"
for run in cold cached cached new; do
  k="$kernel"
  if [ "$run" = new ]; then  # the same kernel with one more line: a new cache key
    k="$out/edited.${kernel##*.}"
    { cat "$kernel"; echo "// edited $(date +%s%N)"; } >"$k"
  fi
  t0=$(date +%s.%N)
  "$kforge" eval "$problem" "$k" --world "$world" --json >"$out/$run.json" || true
  t1=$(date +%s.%N)
  python3 - "$out/$run.json" "$run" "$t0" "$t1" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
wall = float(sys.argv[4]) - float(sys.argv[3])
secs = v.get("seconds", {})
secs = secs.items() if isinstance(secs, dict) else secs
stages = "  ".join(f"{k} {s:.2f}s" for k, s in secs)
print(f"{sys.argv[2]:>7}: {v['status']:<8} wall {wall:.2f}s   {stages}")
PY
done
