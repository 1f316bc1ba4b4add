#!/usr/bin/env bash
# bench/timing_gpu.sh BUILD_DIR OUTFILE: issue 33's measurements for one prebuilt tree,
# on a one-GPU machine, in one run (about 4 minutes on an H100). Run it for the old build
# and the new one in the same call for a before/after:
#   bash bench/timing_gpu.sh build-old /tmp/old.txt; bash bench/timing_gpu.sh build /tmp/new.txt
# Parts (PARTS="forge speed exit latency", all by default):
#   forge    the forged-timer cases (tests/faults/cuda/forges_*, slow_when_audited) at
#            world 1 against the same kernel honest (bench/timing_kernels/honest_20us.cu):
#            status, median and p10, the speedup over NCCL, the audit's verdict
#            (time_check, audited and claimed ms a call) and flags, FORGE_REPS evals each
#   speed    every expert kernel (problems/*/solution*.cu) and shipped example
#            (problems/*/examples/uva.cu) at world 1, REPS evals each: the speedups, their
#            median, and how many evals the audit confirmed (SPEED_FILES: a subset)
#   exit     the missing-exit-wait case (tests/faults/cuda/no_exit_wait.cu) at world 2
#            (emulated on one GPU), EXIT_REPS evals; the honest UVA all_reduce and the
#            expert all_reduce at world 2, which must stay correct
#   latency  one eval of the UVA all_reduce cold, then cached x3, then edited x2 (wall s)
# The old build's verdicts have no time_check: it prints "-" there.
set -u
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
build="${1:?usage: bench/timing_gpu.sh BUILD_DIR OUTFILE}"
outfile="${2:?usage: bench/timing_gpu.sh BUILD_DIR OUTFILE}"
K="$(cd "$build" && pwd)/kforge"
[ -x "$K" ] || { echo "no kforge in $build: build it first (bench/gpu_build.sh)"; exit 2; }
parts="${PARTS:-forge speed exit latency}"
reps="${REPS:-5}"
work="$(mktemp -d)"
export KFORGE_RUNS="$work/runs"
export KFORGE_CACHE="$work/cache"  # the build's own cache: both builds compile alike
exec > >(tee "$outfile") 2>&1
echo "== bench/timing_gpu.sh $build ($(git log --oneline -1 | cut -c1-60)), $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

# A candidate is one file: every #include "NAME" is pasted in, once, recursively.
paste_in() { python3 bench/paste_includes.py "$1" "$2"; }

# row FILE: status median p10 speedup time_check audited claimed flags, then the summary.
row() {
  python3 - "$1" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception:
    print("no-json"); sys.exit()
t, a = v.get("candidate_time", {}), v.get("audit", {})
print(f'{v.get("status", "?"):<8} {t.get("median_ms", 0):9.4f} {t.get("p10_ms", 0):9.4f} '
      f'{v.get("speedup", 0):6.2f}x {v.get("time_check", "-"):<10} '
      f'{a.get("audited_ms", 0):9.4f} {a.get("claimed_ms", 0):9.4f} '
      f'{",".join(v.get("flags", [])) or "-":<22} {v.get("summary", "")[:90]}')
PY
}

ev() {  # ev LABEL PROBLEM FILE WORLD [ARGS...]: one eval, its verdict in $work/LABEL.json
  local label=$1 problem=$2 file=$3 world=$4
  shift 4
  "$K" eval "$problem" "$file" --world "$world" --json "$@" >"$work/$label.json" 2>"$work/$label.err"
}

if [[ " $parts " == *" forge "* ]]; then
  echo "== forged timers at world 1 vs the honest kernel (ms a call)"
  printf '%-24s %-8s %9s %9s %7s %-10s %9s %9s %-22s %s\n' case status median p10 speedup \
    time_check audited claimed flags summary
  src="$work/src"
  mkdir -p "$src"
  for f in bench/timing_kernels/honest_20us.cu tests/faults/cuda/forges_event_time.cu \
    tests/faults/cuda/forges_driver_table.cu tests/faults/cuda/forges_unless_audited.cu \
    tests/faults/cuda/slow_when_audited.cu; do
    n=$(basename "$f" .cu)
    paste_in "$f" "$src/$n.cu"
    for i in $(seq 1 "${FORGE_REPS:-2}"); do
      ev "forge-$n-$i" all_reduce "$src/$n.cu" 1
      printf '%-24s %s\n' "$n" "$(row "$work/forge-$n-$i.json")"
    done
  done
fi

if [[ " $parts " == *" speed "* ]]; then
  echo "== expert kernels and examples at world 1: speedup over NCCL, $reps evals each"
  printf '%-44s %-8s %-40s %7s %s  %s\n' kernel status speedups median confirmed \
    "claimed/audited ms (last eval: the gap is the audit's give)"
  # SPEED_FILES narrows the set (one call has 10 minutes): paths or globs under problems/.
  for f in ${SPEED_FILES:-problems/*/solution*.cu problems/*/examples/uva.cu}; do
    [ -f "$f" ] || continue
    p=$(echo "$f" | cut -d/ -f2)
    label=$(echo "$f" | cut -d/ -f2- | tr / _)
    sp=(); st=""; conf=0
    for i in $(seq 1 "$reps"); do
      ev "speed-$label-$i" "$p" "$f" 1
      read -r s x c gap <<<"$(python3 -c "
import json,sys
try: v=json.load(open(sys.argv[1]))
except Exception: print('no-json 0 -'); sys.exit()
a=v.get('audit',{})
print(v.get('status','?'), v.get('speedup',0), v.get('time_check','-'), f\"{a.get('claimed_ms',0):.4f}/{a.get('audited_ms',0):.4f}\")" "$work/speed-$label-$i.json")"
      st="$s"; sp+=("$x"); [ "$c" = confirmed ] && conf=$((conf + 1))
    done
    med=$(printf '%s\n' "${sp[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf '%-44s %-8s %-40s %6.2fx %s/%s  %s\n' "$label" "$st" \
      "$(printf '%.2f ' "${sp[@]}")" "$med" "$conf" "$reps" "${gap:--}"
  done
fi

if [[ " $parts " == *" exit "* ]]; then
  echo "== missing exit wait at world 2 (emulated): want unstable; the honest ones correct"
  paste_in tests/faults/cuda/no_exit_wait.cu "$work/no_exit_wait.cu"
  caught=0
  for i in $(seq 1 "${EXIT_REPS:-5}"); do
    ev "exit-$i" all_reduce "$work/no_exit_wait.cu" 2 --no-time
    s=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('status','?'))" "$work/exit-$i.json" 2>/dev/null || echo no-json)
    [ "$s" = unstable ] && caught=$((caught + 1))
    echo "no_exit_wait eval $i: $s"
  done
  echo "no_exit_wait: caught in $caught of ${EXIT_REPS:-5}"
  for f in problems/all_reduce/examples/uva.cu problems/all_reduce/solution.cu; do
    ev exit-honest all_reduce "$f" 2 --no-time
    printf '%-40s %s\n' "$f (world 2)" "$(row "$work/exit-honest.json")"
  done
fi

if [[ " $parts " == *" latency "* ]]; then
  echo "== eval latency, all_reduce UVA example at world 1 (wall seconds)"
  base=problems/all_reduce/examples/uva.cu
  for run in cold cached cached cached edited edited; do
    f="$base"
    if [ "$run" = cold ]; then rm -rf "$KFORGE_CACHE"; fi
    if [ "$run" = edited ]; then
      f="$work/edited.cu"
      { cat "$base"; echo "// edited $(date +%s%N)"; } >"$f"
    fi
    t0=$(date +%s.%N)
    ev "lat-$run" all_reduce "$f" 1
    t1=$(date +%s.%N)
    python3 -c "import sys; print(f'{sys.argv[1]:>7}: {float(sys.argv[3])-float(sys.argv[2]):.2f} s')" \
      "$run" "$t0" "$t1"
  done
fi
echo "== done: $outfile (verdicts under $work)"
