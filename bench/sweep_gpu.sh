#!/usr/bin/env bash
# bench/sweep_gpu.sh [SAMPLES] [JOBS] [MAX_TURNS]: `kforge sweep all --model builtin` at
# world 1 on a GPU machine, its wall time against the same samples run one after another
# with `kforge solve`, and how busy the GPU was during each (nvidia-smi, every 200 ms);
# then each sample's verdict both ways. PROBLEMS (default all) limits the problems.
# On the lent machine: bash bench/gpu_deps.sh .debs && bash bench/sweep_gpu.sh 4 2 1
set -u
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
out="${OUT:-/tmp/kf-gpu}"
mkdir -p "$out"
build="${KF_BUILD_DIR:-build-gpu}"
if [ -z "${KF_SKIP_BUILD:-}" ]; then source bench/gpu_build.sh || exit 1; fi
K="$build/kforge"
samples="${1:-4}" jobs="${2:-2}" turns="${3:-1}"
export KFORGE_RUNS="$out/runs"

# busy LOG CMD...: runs CMD while sampling GPU utilization; prints wall s and mean util %.
busy() {
  local log="$1"; shift
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 >"$log" 2>/dev/null &
  local smi=$! t0=$(date +%s.%N)
  "$@"
  local t1=$(date +%s.%N)
  kill $smi 2>/dev/null; wait $smi 2>/dev/null
  python3 - "$log" "$t0" "$t1" <<'PY'
import sys
v = [float(l) for l in open(sys.argv[1]) if l.strip().replace('.', '', 1).isdigit()]
print(f"wall {float(sys.argv[3]) - float(sys.argv[2]):.1f} s, GPU busy {sum(v)/max(len(v),1):.0f}% "
      f"(mean of {len(v)} samples), {sum(1 for x in v if x > 0)} samples > 0%")
PY
}

problems="${PROBLEMS:-$("$K" problems --json | python3 -c 'import json,sys; print(" ".join(p["name"] for p in json.load(sys.stdin)))')}"
echo "== warm the build cache (one eval of each problem's builtin turn is not counted)"
for p in $problems; do "$K" solve "$p" --headless --model builtin --world 1 --max-turns 1 --out "$out/warm-$p" >/dev/null 2>&1; done
echo "== kforge sweep all --samples $samples --model builtin --world 1 --max-turns $turns --jobs $jobs"
# shellcheck disable=SC2086
busy "$out/smi-sweep.log" "$K" sweep $problems --samples "$samples" --model builtin --world 1 \
  --max-turns "$turns" --jobs "$jobs" --out "$out/sweep" 2>"$out/sweep.err" >"$out/sweep.txt"
cat "$out/sweep.txt"
echo "== the same samples, one kforge solve after another"
seq_run() {
  for p in $problems; do for i in $(seq 1 "$samples"); do
    "$K" solve "$p" --headless --model builtin --world 1 --max-turns "$turns" --llm-seed $((i - 1)) --out "$out/seq-$p-$i" >/dev/null 2>&1
  done; done
}
busy "$out/smi-seq.log" seq_run
# Each sample's verdict both ways: the sweep's (its samples' verdict.json) against the
# serial solve's of the same problem and index (the builtin's sample i asks the same way).
echo "== verdicts, sweep against serial: problem, correct and faster-than-baseline counts"
python3 - "$out" $problems <<'PY'
import json, os, sys
out, problems = sys.argv[1], sys.argv[2:]
def verdict(path):
    try:
        v = json.load(open(path))
    except Exception:
        return ("none", 0.0)
    return (v.get("status", "?"), v.get("speedup", 0) or 0)
same = 0; total = 0
for p in problems:
    sw, sq = [], []
    for i in range(64):
        a = f"{out}/sweep/samples/{p}/builtin/{i}/verdict.json"
        b = f"{out}/seq-{p}-{i + 1}/verdict.json"
        if not os.path.exists(a) and not os.path.exists(b):
            break
        sw.append(verdict(a)); sq.append(verdict(b))
    c = lambda vs: sum(s == "correct" for s, _ in vs)
    f = lambda vs: sum(s == "correct" and x > 1 for s, x in vs)
    total += len(sw); same += sum(a[0] == b[0] for a, b in zip(sw, sq))
    print(f"{p:<32} sweep {c(sw)}/{len(sw)} correct, {f(sw)} faster   serial {c(sq)}/{len(sq)} correct, {f(sq)} faster")
print(f"statuses equal in {same} of {total} samples")
PY
echo "== kforge report"
"$K" report "$out/sweep" && cp "$out/sweep/report.html" "$out/sweep-report.html"
