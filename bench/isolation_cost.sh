#!/usr/bin/env bash
# bench/isolation_cost.sh: what kforge's sandbox (sandbox/confine.h: bubblewrap, a cgroup,
# kforge-confine) costs per eval. The eval-latency benchmark (cold, cached twice, an
# edited kernel) with KFORGE_ISOLATION=none, then confined, at world 1 and 2, on the same
# build. Expects $K (the kforge binary) and the machine set up as gpu_check.sh does; on
# a GPU machine: PARTS="... isolation" bash bench/gpu_check.sh runs it.
set -u
cd "$(dirname "$0")/.."
K="${K:-build/kforge}"
if [ -e /dev/nvidia0 ] || [ -e /dev/nvidiactl ]; then ex=uva.cu; else ex=host.cpp; fi
for world in 1 2; do
  for mode in none bwrap; do
    echo "-- world $world, isolation $mode"
    if [ "$mode" = none ]; then
      KFORGE_ISOLATION=none KFORGE="$K" bench/eval_latency.sh all_reduce problems/all_reduce/examples/$ex "$world"
    else
      KFORGE="$K" bench/eval_latency.sh all_reduce problems/all_reduce/examples/$ex "$world"
    fi
  done
done
# One verdict's record of how it was confined.
"$K" eval all_reduce problems/all_reduce/examples/$ex --world 1 --size small --no-time 2>&1 | grep -E "sandbox:|isolation:"
