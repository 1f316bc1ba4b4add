#!/usr/bin/env bash
# bench/speed_gpu.sh BUILD [OLD_BUILD]: kernels' own times at world 1 on a GPU machine, REPS
# evals each, in milliseconds as well as speedups, so that a change to the judge can be told
# apart from the baseline's drift.
#
#   FILES   kernel paths under the checkout (default: every expert and shipped example)
#   REPS    evals a kernel a build (default 5)
#   ARGS    more arguments for every eval
#   DEADLINE seconds after which no new kernel is started (default none): one call has 10
#            minutes, and a table cut short still says which kernels it holds
#
# With OLD_BUILD (a build of an older tree, whose kforge reads its own problems/ and
# primitives/), the evals alternate old, new, old, new, ..., each build evaluating the
# file of the same path in its own tree, so drift over the run hits both alike. A line a
# kernel a build: the candidate's median ms (median of the evals' medians, min-max), the
# baseline's, the speedup's, and how many evals the audit confirmed. Raw verdicts in $OUT/s.
# On the lent machine: bash bench/gpu_deps.sh .debs && source bench/gpu_build.sh && \
#   bash bench/speed_gpu.sh build-gpu
set -u
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
out="${OUT:-/tmp/kf-gpu}"
mkdir -p "$out/s"
new="$(cd "${1:?usage: bench/speed_gpu.sh BUILD [OLD_BUILD]}" && pwd)"
old="${2:+$(cd "$2" && pwd)}"
reps="${REPS:-5}"
export KFORGE_RUNS="$out/runs"
start=$(date +%s)

# root_of BUILD: the checkout a build reads problems/ from (CMake's source dir).
root_of() { sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$1/CMakeCache.txt"; }
builds=("$new")
[ -n "$old" ] && builds=("$old" "$new")

# one LABEL BUILD FILE: one eval; prints "status cand_ms base_ms speedup time_check".
one() {
  local label=$1 build=$2 file=$3 problem
  problem=$(echo "$file" | cut -d/ -f2)
  (cd "$(root_of "$build")" && "$build/kforge" eval "$problem" "$file" --world 1 --json ${ARGS:-}) \
    >"$out/s/$label.json" 2>"$out/s/$label.err"
  python3 - "$out/s/$label.json" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception:
    print("no-json 0 0 0 -"); sys.exit()
c, b = v.get("candidate_time", {}), v.get("baseline_time", {})
print(v.get("status", "?"), c.get("median_ms", 0), b.get("median_ms", 0), v.get("speedup", 0),
      v.get("time_check", "-"))
PY
}

# summary TAG VALUES...: "median (min-max)" of the values.
summary() {
  python3 -c '
import sys
v = sorted(float(x) for x in sys.argv[2:])
m = v[(len(v) - 1) // 2] if v else 0
fmt = "{:.2f}" if sys.argv[1] == "x" else "{:.4f}"
print((fmt + " (" + fmt + "-" + fmt + ")").format(m, v[0], v[-1]) if v else "-")' "$@"
}

echo "== bench/speed_gpu.sh ($(git log --oneline -1 2>/dev/null | cut -c1-50)), $(date -u +%FT%TZ), REPS=$reps"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for b in "${builds[@]}"; do echo "build $b reads $(root_of "$b")"; done
printf '%-50s %-4s %-8s %-26s %-26s %-20s %s\n' kernel tree status "kernel ms (min-max)" \
  "baseline ms (min-max)" "speedup (min-max)" confirmed
for f in ${FILES:-problems/*/solution*.cu problems/*/examples/uva.cu}; do
  if [ -n "${DEADLINE:-}" ] && [ $(( $(date +%s) - start )) -gt "$DEADLINE" ]; then
    echo "-- deadline: $f and the kernels after it not run"; break
  fi
  label=$(echo "$f" | cut -d/ -f2- | tr / _ | sed 's/\.cu$//')
  declare -A cm=() bm=() sp=() st=() conf=()
  for i in $(seq 1 "$reps"); do
    for b in "${builds[@]}"; do
      tag=new; [ "$b" = "$old" ] && tag=old
      [ -f "$(root_of "$b")/$f" ] || continue
      read -r s c bl x t <<<"$(one "$label-$tag-$i" "$b" "$f")"
      st[$tag]="$s"
      [ "$s" = correct ] || continue
      cm[$tag]+=" $c"; bm[$tag]+=" $bl"; sp[$tag]+=" $x"
      [ "$t" = confirmed ] && conf[$tag]=$(( ${conf[$tag]:-0} + 1 ))
    done
  done
  for tag in old new; do
    [ -n "${st[$tag]:-}" ] || continue
    # shellcheck disable=SC2086
    printf '%-50s %-4s %-8s %-26s %-26s %-20s %s/%s\n' "$label" "$tag" "${st[$tag]}" \
      "$(summary ms ${cm[$tag]:-})" "$(summary ms ${bm[$tag]:-})" "$(summary x ${sp[$tag]:-})" \
      "${conf[$tag]:-0}" "$reps"
  done
  unset cm bm sp st conf
done
echo "== done in $(( $(date +%s) - start )) s"
