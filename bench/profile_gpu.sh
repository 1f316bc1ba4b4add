#!/usr/bin/env bash
# bench/profile_gpu.sh: `kforge profile` and the sanitizer reruns on the lent GPU machine,
# in one go (issue 14). Builds kforge there (bench/gpu_build.sh), then, by PARTS:
#   info       the tools' versions and the counters this GPU offers (ncu --query-metrics)
#   experts    kforge profile of each problem's expert kernel (and its baseline beside
#              it) at each of WORLDS (world 2 on one GPU is emulation: no speed claims);
#              METRICS picks the set (default: kforge's, time); after a world > 1 that
#              does not profile, the other problems skip that world
#   sanitizer  the planted out-of-bounds and race kernels: their verdicts, then
#              kforge profile --tool memcheck / racecheck
#   cost       the seconds a profile adds: kforge eval and kforge profile of one kernel
#   rank       kforge profile --rank 1 at world 2 (only rank 1 under ncu)
#   solve      kforge solve --model builtin --world 1 --profile auto (the trajectory)
#   replay     why the several-pass sets fail: --metrics brief at world 1 on the expert
#              all_reduce and on bench/profile_kernels/plain_sum.cu (no flags), under each
#              of ncu's replay modes (REPLAYS, default "kernel application range"); each
#              run's verdict log and profile folder are kept
# Everything lands in $OUT/profile-gpu.tgz (JSON, the tools' raw CSV and logs) beside the
# console log. On the lent machine:
#   bash bench/gpu_deps.sh .debs && PARTS="info experts" bash bench/profile_gpu.sh
set -u
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
out="${OUT:-/tmp/kf-gpu}"
res=/tmp/kf-profile
mkdir -p "$res/j" "$res/raw"
build="${KF_BUILD_DIR:-build-gpu}"
problems="${PROBLEMS:-all_reduce all_gather reduce_scatter all_to_all broadcast}"
worlds="${WORLDS:-1 2}"
parts=" ${PARTS:-info experts sanitizer cost rank solve} "
want() { [[ "$parts" == *" $1 "* ]]; }
source bench/gpu_build.sh || exit 1
K="$build/kforge"
export KFORGE_RUNS="$res/runs"
NCU=/usr/local/cuda/bin/ncu

# prof LABEL TIMEOUT ARGS...: one kforge profile --json, summarized on a few lines.
prof() {
  local label="$1" limit="$2"; shift 2
  local t=$(date +%s.%N)
  timeout -s TERM "$limit" "$K" profile "$@" --json >"$res/j/$label.json" 2>"$res/j/$label.err"
  local rc=$?
  python3 - "$res/j/$label.json" "$label" "$rc" "$t" "$(date +%s.%N)" "$res/raw" <<'PY'
import json, sys, os, shutil
path, label, rc, t0, t1, raw = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception:
    print(f"BAD {label:<28} rc={rc} no JSON: {open(path.replace('.json','.err')).read()[-400:]}")
    sys.exit()
v = r.get("verdict", {})
open(path.replace(".json", ".status"), "w").write(r["status"])
print(f"{label:<28} {r['status']:<8} rc={rc} {float(t1)-float(t0):5.1f}s wall, profile {r['seconds']:.1f}s; verdict: {v.get('summary','')[:110]}")
if r.get("note"): print("   note:", r["note"][:300])
for k in r.get("kernels", []):
    m = k["metrics"]
    g = lambda n: m.get(n, -1)
    st = sorted(((v, n.split("stalled_")[1].split("_per")[0]) for n, v in m.items() if "issue_stalled" in n), reverse=True)[:3]
    print(f"   rank {k['rank']} {k['side']:<9} {k['kernel'][:60]:<60} {(g('gpu__time_duration.sum') or -1)/1e3:9.2f} us "
          f"SM {g('sm__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}% DRAM {g('dram__throughput.avg.pct_of_peak_sustained_elapsed'):5.1f}% "
          f"occ {g('sm__warps_active.avg.pct_of_peak_sustained_active'):5.1f}% grid {g('launch__grid_size'):.0f}x{g('launch__block_size'):.0f} "
          f"regs {g('launch__registers_per_thread'):.0f} stalls " + ", ".join(f"{n} {p:.0f}%" for p, n in st))
for f in r.get("findings", [])[:3]:
    print(f"   rank {f['rank']}: {f['what'][:100]} | {f['kernel'][:40]} | {f['file'].split('/')[-1]}:{f['line']}")
for f in r.get("raw_files", []):
    if os.path.exists(f) and os.path.getsize(f) < 400000 and not f.endswith(".ncu-rep"):
        shutil.copy(f, os.path.join(raw, label + "-" + os.path.basename(f)))
PY
}

# The results so far, packed after every part (a call cut short still brings them back).
pack() { tar -C "$res" -czf "$out/profile-gpu.tgz" j raw $(cd "$res"; ls -d solve* 2>/dev/null); }

if want info; then
  echo "== tools"
  $NCU --version | tail -2
  /usr/local/cuda/bin/compute-sanitizer --version | tail -2
  $NCU --help >"$res/raw/ncu-help.txt" 2>&1
  grep -n -i -E -A2 "communicator|lockstep|nvtx-include|replay-mode|print-units|log-file" "$res/raw/ncu-help.txt" | head -60
  $NCU --query-metrics --chip gh100 >"$res/raw/query-metrics.txt" 2>&1
  grep -E "^(smsp__warp_issue_stalled|smsp__pcsamp_warps_issue_stalled|nvl|pcie__|dram__throughput|sm__throughput|sm__warps_active|gpu__time_duration|launch__)" "$res/raw/query-metrics.txt" | cut -c1-110 | head -80
  pack
fi

if want experts; then
  echo "== kforge profile of the expert kernels (world 2 on one GPU is emulated: no speed claims)"
  skip_w2=""
  for p in $problems; do
    for w in $worlds; do
      [ "$w" -gt 1 ] && [ -n "$skip_w2" ] && { echo "$p-w$w: skipped ($skip_w2)"; continue; }
      prof "$p-w$w" "${PROF_LIMIT:-90}" "$p" "problems/$p/solution.cu" --world "$w" ${METRICS:+--metrics $METRICS}
      st=$(cat "$res/j/$p-w$w.status" 2>/dev/null)
      [ "$st" != ran ] && [ "$w" -gt 1 ] && skip_w2="world $w did not profile for $p"
    done
  done
  pack
fi

if want sanitizer; then
  echo "== planted faults: the verdicts, then the sanitizer reruns"
  for k in oob race; do
    "$K" eval all_reduce "tests/kernels/cuda/$k.cu" --world 1 --json >"$res/j/eval-$k.json" 2>&1
    python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print('eval', sys.argv[2], v['status'], '|', v['summary'][:200])" "$res/j/eval-$k.json" "$k"
  done
  prof oob-memcheck 150 all_reduce tests/kernels/cuda/oob.cu --world 1 --tool memcheck
  prof race-racecheck 150 all_reduce tests/kernels/cuda/race.cu --world 1 --tool racecheck
  pack
fi

if want cost; then
  echo "== the cost of a profile: eval vs profile of the expert all_reduce, world 1"
  for i in 1 2; do
    t=$(date +%s.%N); "$K" eval all_reduce problems/all_reduce/solution.cu --world 1 --json >/dev/null 2>&1
    t1=$(date +%s.%N); prof "cost-$i" 120 all_reduce problems/all_reduce/solution.cu --world 1 >/dev/null
    t2=$(date +%s.%N)
    python3 -c "import sys; a,b,c=map(float,sys.argv[1:]); print(f'eval {b-a:.1f} s, profile {c-b:.1f} s: +{(c-b)-(b-a):.1f} s')" "$t" "$t1" "$t2"
  done
  pack
fi

if want rank && [ "$(cat "$res/j/all_reduce-w2.status" 2>/dev/null)" = ran ]; then
  echo "== only rank 1 under ncu, world 2 (emulated)"
  prof all_reduce-w2-rank1 "${PROF_LIMIT:-90}" all_reduce problems/all_reduce/solution.cu --world 2 --rank 1
  pack
fi

if want replay; then
  echo "== --metrics brief at world 1, by ncu's replay mode: the expert all_reduce and a kernel with no flags"
  for mode in ${REPLAYS:-kernel application range}; do
    for k in expert plain; do
      kern=problems/all_reduce/solution.cu
      [ "$k" = plain ] && kern=bench/profile_kernels/plain_sum.cu
      prof "replay-$mode-$k" "${PROF_LIMIT:-90}" all_reduce "$kern" --world 1 --metrics brief "--tool-args=--replay-mode $mode"
      python3 - "$res/j/replay-$mode-$k.json" "$res/raw/replay-$mode-$k" <<'PY'
import json, os, shutil, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    sys.exit()
log = r.get("verdict", {}).get("log", "")
tail = [l for l in log.splitlines() if l.strip()][-12:]
print("   log:", "\n        ".join(l[:200] for l in tail))
d = r.get("dir", "")
if d and os.path.isdir(d):
    shutil.copytree(d, sys.argv[2], ignore=shutil.ignore_patterns("*.ncu-rep"), dirs_exist_ok=True)
PY
    done
  done
  dmesg 2>/dev/null | tail -5
  pack
fi

if want solve; then
  echo "== kforge solve --model builtin --world 1 --profile auto (target 50x: every candidate is slow)"
  timeout -s TERM "${SOLVE_LIMIT:-200}" "$K" solve all_reduce --model builtin --world 1 --headless --max-turns 2 --target 50 \
    --profile auto --out "$res/solve" >"$res/solve.jsonl" 2>"$res/solve.err"
  echo "solve rc=$? $(tail -1 "$res/solve.jsonl" | cut -c1-300)"
  traj=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])['trajectory'])" "$res/solve.jsonl" 2>/dev/null)
  if [ -n "$traj" ]; then
    cp "$traj" "$res/solve.trajectory.jsonl"
    python3 - "$traj" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "profile":
        print("profile event:", json.dumps({k: e[k] for k in ("turn", "tool", "status", "seconds", "note", "lines") if k in e})[:1500])
    if e.get("event") == "prompt" and "Profile of this candidate" in json.dumps(e):
        s = json.dumps(e); i = s.find("Profile of this candidate"); print("prompt has:", s[i:i+700])
PY
  fi
fi
pack
ls -la "$out"
