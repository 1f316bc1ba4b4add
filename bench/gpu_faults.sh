#!/usr/bin/env bash
# bench/gpu_faults.sh: the CUDA fault suite (tests/faults/cuda/) on a GPU machine.
# Every case names, on its first line, the problem, the worlds, the verdict it must get
# and any extra arguments (as tests/faults/ does for the host suite run by the test
# command). Each runs through the real kforge; after each, no kforge-rank may be left and
# the shipped UVA kernel's eval at the same world must be correct. The route_* cases do
# the same half-millisecond of GPU work per call by different routes (comm.stream(),
# streams of their own, the per-thread and legacy streams by handle, a graph) and end in
# a table of the times the timer gave them: none may be faster than the honest route.
# RANKS=warm runs each case through warm ranks instead (warm_case below).
# On the lent machine:  bash bench/gpu_deps.sh .debs && bash bench/gpu_faults.sh
set -u
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
out="${OUT:-/tmp/kf-gpu}"
mkdir -p "$out/f"
build="${KF_BUILD_DIR:-build-gpu}"
if [ -z "${KF_SKIP_BUILD:-}" ]; then source bench/gpu_build.sh || exit 1; fi
K="$build/kforge"
export KFORGE_RUNS="$out/runs"
cases=tests/faults/cuda
src=/tmp/kf-faults-cuda
mkdir -p "$src"
only="${FAULTS:-}"  # e.g. FAULTS="route_graph hang_all": only these

# A candidate is one file: every #include "NAME" (common.cuh, ../forge.h) is replaced by
# that file's text, once, recursively, as tests/faults_test.cpp does for the host cases.
paste_common() { python3 bench/paste_includes.py "$1" "$2"; }

# verdict FILE: status, then the fields the table needs, on one line.
verdict() {
  python3 - "$1" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception:
    print("no-json - - - - - -"); sys.exit()
t = v.get("candidate_time", {})
b = v.get("baseline_time", {})
print(v.get("status", "?"), f'{t.get("median_ms", 0):.4f}', f'{t.get("p10_ms", 0):.4f}',
      f'{t.get("off_stream", 0)}/{t.get("n", 0)}', f'{v.get("off_stream_slack_ms", 0)*1000:.1f}',
      ",".join(v.get("flags", [])) or "-", f'{b.get("median_ms", 0):.4f}')
PY
}

# warm_case PROBLEM WORLD LABEL CASE EXPECT [ARGS...] (RANKS=warm): the case and then the
# problem's shipped kernel as the two turns of one `kforge solve --ranks warm`
# (bench/replay_of.py), so that the next eval runs on the warm set the fault hit, or on the
# one that replaced it. Their verdicts go where the cold route puts them. A case expected
# correct is timed here even when the cold route does not time it: an untimed correct
# verdict meets the solve's target, and the solve would end before the next eval.
warm_case() {
  local problem=$1 w=$2 label=$3 case=$4 expect=$5; shift 5
  local targs=(--no-time)
  { [ "$expect" = correct ] || [ "$timed" = yes ]; } && targs=()
  python3 bench/replay_of.py "$out/f/$label.replay.jsonl" "$case" "problems/$problem/examples/uva.cu"
  "$K" solve "$problem" --model "replay:$out/f/$label.replay.jsonl" --headless --world "$w" \
    --max-turns 2 --target 1e9 --ranks warm "${targs[@]}" "$@" --out "$out/f/$label.solve" \
    >"$out/f/$label.out" 2>"$out/f/$label.err"
  python3 - "$out/f/$label.out" "$out/f/$label.json" "$out/f/$label-next.json" <<'PY'
import json, sys
traj = ""
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "result":
        traj = e.get("trajectory", "")
verdicts = [e["verdict"] for e in map(json.loads, open(traj)) if e.get("type") == "verdict"] if traj else []
for path, v in zip(sys.argv[2:], verdicts):
    json.dump(v, open(path, "w"))
PY
}

# warm_use VERDICT: how the eval used warm ranks: "reused" (a set that was up: the fault
# left it usable), "started" (a new set: the fault ended the old one), "cold".
warm_use() {
  python3 - "$1" <<'PY'
import json, sys
try:
    notes = " ".join(json.load(open(sys.argv[1])).get("harness_notes", []))
except Exception:
    notes = ""
print("reused" if "of the set" in notes else "started" if "started the set" in notes else "cold")
PY
}

ranks="${RANKS:-cold}"
[ "$ranks" = warm ] && echo "== through warm ranks: each case and then the shipped kernel, one solve --ranks warm"
pass=0; fail=0; table=""
echo "== the CUDA fault cases ($(ls $cases/*.cu | wc -l) files)"
for f in $cases/*.cu; do
  name=$(basename "$f" .cu)
  [ -n "$only" ] && [[ " $only " != *" $name "* ]] && continue
  read -r _ _ problem rest < "$f"
  worlds=1; expect=""; timed=no; args=()
  for w in $rest; do
    case "$w" in
      world=*) worlds="${w#world=}" ;;
      expect=*) expect="${w#expect=}" ;;
      timed) timed=yes ;;
      args=*) IFS=, read -r -a args <<<"${w#args=}" ;;
    esac
  done
  paste_common "$f" "$src/$name.cu"
  for w in ${worlds//,/ }; do
    label="$name-w$w"
    time_args=(--no-time); [ "$timed" = yes ] && time_args=()
    t0=$(date +%s.%N)
    if [ "$ranks" = warm ]; then
      warm_case "$problem" "$w" "$label" "$src/$name.cu" "$expect" "${args[@]}"
    else
      "$K" eval "$problem" "$src/$name.cu" --world "$w" "${time_args[@]}" "${args[@]}" --json \
        >"$out/f/$label.json" 2>"$out/f/$label.err"
    fi
    secs=$(python3 -c "import sys; print(f'{float(sys.argv[2])-float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
    read -r st med p10 off slack flags bmed <<<"$(verdict "$out/f/$label.json")"
    left=$(pgrep -c kforge-rank || true)
    if [ "$ranks" != warm ]; then
      "$K" eval all_reduce problems/all_reduce/examples/uva.cu --world "$w" --no-time --json \
        >"$out/f/$label-next.json" 2>/dev/null
    fi
    read -r next _ <<<"$(verdict "$out/f/$label-next.json")"
    [ "$ranks" = warm ] && next="$next/$(warm_use "$out/f/$label-next.json")"
    ok=ok; { [ "$st" = "$expect" ] && [ "$left" = 0 ] && [ "${next%%/*}" = correct ]; } || ok=BAD
    # Any verdict but a crash or a hang leaves the set to the next eval (a crash or a hang
    # may end it: a rank's death does, an error returned by kf_run does not).
    if [ "$ranks" = warm ] && [ "$expect" != crash ] && [ "$expect" != timeout ]; then
      [ "${next#*/}" = reused ] || ok=BAD
    fi
    [ "$ok" = ok ] && pass=$((pass + 1)) || fail=$((fail + 1))
    summary=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('summary','')[:110])" "$out/f/$label.json" 2>/dev/null)
    printf '%s %-28s %-9s (want %-9s) left=%s next=%-16s %5ss  %s\n' "$ok" "$label" "$st" "$expect" "$left" "$next" "$secs" "$summary"
    [ "$timed" = yes ] && table+=$(printf '%-26s %-8s %9s %9s %8s %9s %9s  %s' "$name" "$st" "$med" "$p10" "$off" "$slack" "$bmed" "$flags")$'\n'
  done
done
echo "== $pass of $((pass + fail)) cases as expected, nothing left, next eval correct"
if [ -n "$table" ]; then
  echo "== the same 500 us of GPU work per call, by route (world 1, isolated timing, ms)"
  printf '%-26s %-8s %9s %9s %8s %9s %9s  %s\n' route status median p10 off/n slack_us nccl flags
  printf '%s' "$table"
fi
[ "$fail" = 0 ]
