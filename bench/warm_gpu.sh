#!/usr/bin/env bash
# bench/warm_gpu.sh [PARTS]: warm ranks against cold ones on a GPU machine, in one call
# (issue 34). PARTS (default "latency speed"):
#
#   latency  N evals (default 10) of one kernel through `kforge solve --model replay:F`
#            (bench/replay_of.py: the loop evaluates exactly these files, a turn each):
#            "cached", the same kernel N times after a first eval that fills the build cache
#            and starts the warm set (not counted), and "edited", N kernels that differ by a
#            comment, so each one compiles. --ranks warm and --ranks cold. p50 and p90 of the
#            evals' seconds as the trajectory records them (each turn's eval, compile
#            included). `kforge eval` beside them: on ranks of its own each time, then
#            through a `kforge serve` started for it (KFORGE_SERVE), as a script would.
#   speed    each FILES kernel REPS evals (default 5) through one solve, --ranks warm and
#            --ranks cold, alternating kernel by kernel: the candidate's and the baseline's
#            median ms and the speedup, median (min-max) over the evals, and how many the
#            audit confirmed. A warm set measures its baseline once; the cold evals measure
#            it every time: the two columns say whether the warm baseline drifts.
#
# KERNEL (latency's kernel, default all_reduce's examples/uva.cu), WORLD (default 1),
# N, REPS, LAT_RANKS (latency's modes, default "cold warm"), NO_EVAL (latency without the
# `kforge eval` reference), FILES (default every expert kernel), DEADLINE (seconds after which speed starts
# no new kernel). Raw trajectories under $OUT/w.
# On the lent machine: bash bench/gpu_deps.sh .debs && source bench/gpu_build.sh && \
#   bash bench/warm_gpu.sh
set -u
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
out="${OUT:-/tmp/kf-gpu}"
mkdir -p "$out/w"
K="$(pwd)/${KF_BUILD_DIR:-build-gpu}/kforge"
parts="${1:-latency speed}"
n="${N:-10}" reps="${REPS:-5}" world="${WORLD:-1}"
kernel="${KERNEL:-problems/all_reduce/examples/uva.cu}"
export KFORGE_RUNS="$out/w/runs"

# solve_files TAG RANKS PROBLEM [--edit] FILE...: one solve over these files; the path of
# its trajectory on stdout.
solve_files() {
  local tag=$1 ranks=$2 problem=$3; shift 3
  local nfiles=$#; [ "$1" = --edit ] && nfiles=$(( nfiles - 1 ))
  python3 bench/replay_of.py "$out/w/$tag.replay.jsonl" "$@"
  "$K" solve "$problem" --model "replay:$out/w/$tag.replay.jsonl" --headless --world "$world" \
    --max-turns "$nfiles" --target 1e9 --ranks "$ranks" --out "$out/w/$tag" ${ARGS:-} \
    >"$out/w/$tag.out" 2>"$out/w/$tag.err"
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "result": print(e.get("trajectory", ""))' "$out/w/$tag.out"
}

# verdicts TRAJECTORY SKIP: a line per eval after the first SKIP: seconds status cand_ms
# base_ms speedup time_check and how the eval used warm ranks (reused, started, fallback, cold).
verdicts() {
  python3 - "$1" "$2" <<'PY'
import json, sys
n = 0
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("type") != "verdict":
        continue
    n += 1
    if n <= int(sys.argv[2]):
        continue
    v = e.get("verdict", {})
    c, b = v.get("candidate_time", {}), v.get("baseline_time", {})
    notes = " ".join(n for n in v.get("harness_notes", []) if n.startswith("warm ranks:"))
    warm = ("reused" if "of the set" in notes else "started" if "started the set" in notes
            else "fallback" if "not used" in notes else "cold")
    print(f'{e.get("seconds", 0):.3f}', v.get("status", "?"), c.get("median_ms", 0),
          b.get("median_ms", 0), v.get("speedup", 0), v.get("time_check", "-"), warm)
PY
}

# parts TRAJECTORY SKIP: the median of each part of the verdicts' own seconds (PartClock
# and the eval's steps) over the evals after the first SKIP, the largest first.
parts_of() {
  python3 - "$1" "$2" <<'PY'
import json, sys
n, parts = 0, {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("type") != "verdict":
        continue
    n += 1
    if n <= int(sys.argv[2]):
        continue
    for k, s in e.get("verdict", {}).get("seconds", []):
        parts.setdefault(k, []).append(s)
med = {k: sorted(v)[(len(v) - 1) // 2] for k, v in parts.items()}
for k, m in sorted(med.items(), key=lambda kv: -kv[1]):
    if m >= 0.005:
        print(f"      {k:<34} {m:.3f} s")
PY
}

# pct LABEL VALUES...: "p50 x  p90 y  (n, min-max)" of the seconds.
pct() {
  python3 -c '
import sys
v = sorted(float(x) for x in sys.argv[2:])
if not v: print(f"{sys.argv[1]:<22} no evals"); sys.exit()
q = lambda p: v[min(len(v) - 1, int(round(p * (len(v) - 1))))]
print(f"{sys.argv[1]:<22} p50 {q(0.5):.3f} s  p90 {q(0.9):.3f} s  (n={len(v)}, {v[0]:.3f}-{v[-1]:.3f})")' "$@"
}

latency() {
  local problem; problem=$(echo "$kernel" | cut -d/ -f2)
  echo "== latency: $kernel, world $world, $n evals each (seconds of each eval, compile included)"
  for ranks in ${LAT_RANKS:-cold warm}; do
    local files=() t rows secs st
    for _ in $(seq 0 "$n"); do files+=("$kernel"); done
    t=$(solve_files "lat-cached-$ranks" "$ranks" "$problem" "${files[@]}")
    rows=$(verdicts "$t" 1)
    secs=$(awk 'NF {print $1}' <<<"$rows"); st=$(awk 'NF {print $2 "/" $7}' <<<"$rows" | sort | uniq -c | xargs)
    pct "solve $ranks cached" $secs; echo "    statuses: $st"
    echo "    parts (median):"; parts_of "$t" 1
    files=(); for _ in $(seq 1 "$n"); do files+=("$kernel"); done
    t=$(solve_files "lat-edited-$ranks" "$ranks" "$problem" --edit "${files[@]}")
    rows=$(verdicts "$t" 0)
    secs=$(awk 'NF {print $1}' <<<"$rows"); st=$(awk 'NF {print $2 "/" $7}' <<<"$rows" | sort | uniq -c | xargs)
    pct "solve $ranks edited" $secs; echo "    statuses: $st"
    echo "    first eval of the edited run: $(awk 'NR == 1 {print $1 " s"}' <<<"$rows")"
  done
  [ -n "${NO_EVAL:-}" ] && return
  eval_walls "eval cached (wall)" "$problem" cold
  # The same through a `kforge serve` started here: its first eval starts the set.
  "$K" serve --socket "$out/w/serve.sock" 2>"$out/w/serve.err" &
  local server=$!
  for _ in $(seq 1 50); do [ -S "$out/w/serve.sock" ] && break; sleep 0.1; done
  KFORGE_SERVE="$out/w/serve.sock" "$K" eval "$problem" "$kernel" --world "$world" --json \
    ${ARGS:-} >"$out/w/served-first.json" 2>/dev/null
  KFORGE_SERVE="$out/w/serve.sock" eval_walls "eval, kforge serve (wall)" "$problem" served
  kill -INT "$server"; wait "$server" 2>/dev/null
}

# eval_walls LABEL PROBLEM TAG: N `kforge eval`s of the kernel, their wall times' p50/p90,
# and how they used warm ranks.
eval_walls() {
  local walls=() t0 t1 uses=""
  for i in $(seq 1 "$n"); do
    t0=$(date +%s.%N)
    "$K" eval "$2" "$kernel" --world "$world" --json ${ARGS:-} >"$out/w/eval-$3-$i.json" 2>/dev/null
    t1=$(date +%s.%N); walls+=("$(python3 -c "print($t1 - $t0)")")
    uses+=" $(python3 -c 'import json,sys
v = json.load(open(sys.argv[1])); n = " ".join(v.get("harness_notes", []))
print(v.get("status", "?") + "/" + ("reused" if "of the set" in n else "started" if "started the set" in n else "cold"))' "$out/w/eval-$3-$i.json" 2>/dev/null)"
  done
  pct "$1" "${walls[@]}"
  echo "    statuses: $(echo $uses | tr ' ' '\n' | sort | uniq -c | xargs)"
}

# row ROWS LABEL RANKS: a table line of the speed part from verdicts' lines.
row() {
  python3 - "$@" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in rows if r[1] == "correct"]
def s(i, f):
    v = sorted(float(r[i]) for r in ok)
    return (f + " (" + f + "-" + f + ")").format(v[(len(v) - 1) // 2], v[0], v[-1]) if v else "-"
st = ",".join(sorted(set(r[1] + "/" + r[6] for r in rows))) or "none"
conf = sum(r[5] == "confirmed" for r in rows)
print(f"{sys.argv[2]:<44} {sys.argv[3]:<5} {s(2, '{:.4f}'):<26} {s(3, '{:.4f}'):<26} "
      f"{s(4, '{:.2f}'):<20} {conf}/{len(rows)} {st}")
PY
}

speed() {
  echo "== speed: REPS=$reps evals a kernel through one solve, world $world, warm and cold"
  printf '%-44s %-5s %-26s %-26s %-20s %s\n' kernel ranks "kernel ms (min-max)" \
    "baseline ms (min-max)" "speedup (min-max)" confirmed
  local f problem label ranks t files
  for f in ${FILES:-problems/*/solution*.cu}; do
    if [ -n "${DEADLINE:-}" ] && [ $(( $(date +%s) - start )) -gt "$DEADLINE" ]; then
      echo "-- deadline: $f and the kernels after it not run"; break
    fi
    problem=$(echo "$f" | cut -d/ -f2)
    label=$(echo "$f" | cut -d/ -f2- | tr / _ | sed 's/\.cu$//')
    files=(); for _ in $(seq 1 "$reps"); do files+=("$f"); done
    for ranks in warm cold; do
      t=$(solve_files "speed-$label-$ranks" "$ranks" "$problem" "${files[@]}")
      if [ -z "$t" ]; then printf '%-44s %-5s no trajectory (see %s)\n' "$label" "$ranks" "$out/w/speed-$label-$ranks.err"; continue; fi
      verdicts "$t" 0 >"$out/w/speed-$label-$ranks.rows"
      row "$out/w/speed-$label-$ranks.rows" "$label" "$ranks"
    done
  done
}

echo "== bench/warm_gpu.sh ($(git log --oneline -1 2>/dev/null | cut -c1-50)), $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
start=$(date +%s)
for p in $parts; do "$p"; done
echo "== done in $(( $(date +%s) - start )) s"
