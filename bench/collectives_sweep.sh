#!/usr/bin/env bash
# bench/collectives_sweep.sh [WORLD] [KERNEL_GLOB]: every expert kernel against NCCL over
# message sizes from 4 KB to 1 GB, as nccl-tests sizes them (the "size" column of
# all_reduce_perf & co: all_reduce and broadcast the per-rank buffer; all_gather,
# reduce_scatter and all_to_all the whole array), one line per (problem, kernel, size):
# candidate and NCCL medians, speedup, busbw and percent of the roofline.
# Speed means something only with one GPU per rank (WORLD <= GPUs); emulated runs say so.
# Usage on a GPU machine: bench/collectives_sweep.sh 8 | tee $OUT/sweep.txt
set -u
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
world="${1:-8}"
glob="${2:-solution*.cu}"
K="${KFORGE:-build/kforge}"
out="${OUT:-/tmp/kf-sweep}/sweep-w$world"
mkdir -p "$out"
problems="${PROBLEMS:-all_reduce all_gather reduce_scatter all_to_all broadcast}"
sizes="${SIZES:-4096 65536 524288 4194304 33554432 268435456 1073741824}"

printf '%-15s %-14s %11s %10s %10s %8s %9s %9s %6s %s\n' problem kernel bytes "ms" "nccl ms" speedup busbw "nccl bw" "%roof" status
for p in $problems; do
  for k in problems/$p/$glob; do
    [ -f "$k" ] || continue
    for s in $sizes; do
      # n: elements per rank (fp32) for this nccl-tests size.
      case "$p" in
        all_reduce|broadcast) n=$(( s / 4 )) ;;
        *) n=$(( s / (4 * world) )) ;;
      esac
      [ "$n" -ge 1 ] || continue
      f="$out/$p-$(basename "$k" .cu)-$s.json"
      "$K" eval "$p" "$k" --world "$world" --size full "n=$n" --json >"$f" 2>"$f.err"
      python3 - "$f" "$p" "$(basename "$k" .cu)" "$s" <<'PY'
import json, sys
f, p, k, s = sys.argv[1:]
try:
    v = json.load(open(f))
except Exception:
    print(f"{p:<15} {k:<14} {int(s):>11} {'-':>10} {'-':>10} {'-':>8} {'-':>9} {'-':>9} {'-':>6} no verdict (see {f}.err)")
    sys.exit()
c, b = v.get("candidate_time", {}), v.get("baseline_time", {})
st = v["status"] + (" (emulated)" if v.get("emulated") else "")
print(f"{p:<15} {k:<14} {int(s):>11} {c.get('median_ms',0):>10.4f} {b.get('median_ms',0):>10.4f} "
      f"{v.get('speedup',0):>8.2f} {v.get('busbw_gbps',0):>9.1f} {v.get('baseline_busbw_gbps',0):>9.1f} "
      f"{v.get('pct_roofline',0):>6.1f} {st}")
PY
    done
  done
done
