#!/usr/bin/env bash
# bench/gpu_check.sh: the sandbox's checks and timings on a GPU machine, in one go.
# Builds kforge there, then for each problem evaluates the simple UVA kernel at world 1,
# 2 and 4 (2 and 4 are emulated on one GPU: correctness only), a wrong kernel, a
# deadlocking kernel followed at once by a good one on the same GPU, kf::wait's debug
# deadline, the NCCL baselines, the expert solutions and every mechanism variant of
# them at odd sizes, `kforge solve` with the builtin provider and its replay, `kforge
# tune`, the world-1 sweep, the mechanism microbenchmark and the eval-latency benchmark.
# Writes every verdict as JSON under $OUT/j/ and prints a table. On the lent machine:
#   bash bench/gpu_deps.sh .debs && PARTS="uva wrong ..." bash bench/gpu_check.sh
set -u
cd "$(dirname "$0")/.."
source bench/gpu_env.sh
out="${OUT:-/tmp/kf-gpu}"
mkdir -p "$out/j"
build="${KF_BUILD_DIR:-build-gpu}"
problems="${PROBLEMS:-$(ls problems/*/problem.json | cut -d/ -f2 | tr "\n" " ")}"
worlds="${WORLDS:-1 2 4}"
# Which parts run (one call has 10 minutes): any of uva wrong deadlock rankkill deadline
# baselines solutions families variants solve tune sweep mechanisms latency isolation; the table of
# world-1 timings always ends the output.
parts=" ${PARTS:-uva wrong deadlock deadline baselines solutions variants solve tune sweep mechanisms latency} "
want() { [[ "$parts" == *" $1 "* ]]; }

# The expert kernels' mechanism and algorithm choices (the knobs the template search
# sets), each written as a kernel with its #define in front: PROBLEM:NAME:DEFINES.
variants="all_reduce:one_shot:KF_ALGO=one_shot all_reduce:two_shot:KF_ALGO=two_shot
all_gather:tma:KF_MECH=tma all_gather:reg:KF_MECH=reg all_gather:ce:
reduce_scatter:reg: all_to_all:push:KF_ALGO=push all_to_all:pull:KF_ALGO=pull
broadcast:pull:KF_ALGO=pull broadcast:relay:KF_ALGO=relay broadcast:ce:"
vdir=/tmp/kf-variants
mkdir -p "$vdir"
for v in $variants; do
  IFS=: read -r p name defs <<<"$v"
  src=problems/$p/solution.cu
  [ "$name" = ce ] && src=problems/$p/solution_ce.cu
  { [ -n "$defs" ] && echo "#define ${defs%%=*} ${defs#*=}"; cat "$src"; } >"$vdir/$p-$name.cu"
done

# The machine, then kforge built for it (bench/gpu_build.sh).
source bench/gpu_build.sh || exit 1
K="$build/kforge"
export KFORGE_RUNS="$out/runs"

# run LABEL EXPECT ARGS...: one kforge command, its verdict summarized on one line.
run() {
  local label="$1" expect="$2"; shift 2
  local t=$(date +%s.%N)
  "$K" "$@" --json >"$out/j/$label.json" 2>"$out/j/$label.err"
  local rc=$?
  python3 - "$out/j/$label.json" "$label" "$expect" "$rc" "$t" "$(date +%s.%N)" <<'PY'
import json, sys
path, label, expect, rc, t0, t1 = sys.argv[1:]
try:
    v = json.load(open(path))
except Exception:
    v = {"status": "no-json", "summary": open(path.replace(".json", ".err")).read()[-300:]}
st = v.get("status", "?")
mark = "ok " if st == expect else "BAD"
print(f"{mark} {label:<34} {st:<13} rc={rc} {float(t1)-float(t0):5.1f}s  {v.get('summary','')[:150]}")
PY
}

# The planted bugs of each problem: its bugs/*.patch of a CUDA example, applied into files
# (tests/problems_test.cpp does the same for the host backend's).
bugs="$out/bugs"
mkdir -p "$bugs"
for p in $problems; do
  for b in problems/$p/bugs/*.patch; do
    [ -f "$b" ] || continue
    base=$(sed -n 's/^--- //p' "$b" | head -1)
    case "$base" in
      *.cu) patch -s -o "$bugs/$p-$(basename "$b" .patch).cu" "problems/$p/$base" "$b" ;;
    esac
  done
done

# Every kernel's build first, side by side on all cores, into the build cache the evals
# then find (the eval-latency part measures cold builds with a cache of its own).
echo "== builds (compile only, in parallel)"
t0=$(date +%s)
{
  for p in $problems; do
    echo "baseline $p --compile-only"
    echo "eval $p problems/$p/examples/uva.cu --compile-only"
    for b in "$bugs/$p"-*.cu; do [ -f "$b" ] && echo "eval $p $b --compile-only"; done
    for s in problems/$p/solution*.cu; do [ -f "$s" ] && echo "eval $p $s --compile-only"; done
  done
  for v in $variants; do IFS=: read -r p name _ <<<"$v"; echo "eval $p $vdir/$p-$name.cu --compile-only"; done
  echo "eval all_reduce tests/kernels/cuda/deadlock.cu --compile-only"
  echo "eval all_reduce tests/kernels/cuda/deadline.cu --compile-only"
} | xargs -P "$(nproc)" -I{} sh -c "\"$K\" {} >/dev/null 2>>\"$out/precompile.log\" || echo \"build failed: {}\""
echo "builds done in $(( $(date +%s) - t0 )) s"

if want uva; then
echo "== simple UVA kernels (world 1 real; 2 and 4 emulated: correctness only)"
for p in $problems; do
  for w in $worlds; do run "$p-uva-w$w" correct eval "$p" "problems/$p/examples/uva.cu" --world "$w"; done
done
run "all_reduce-uva-bf16-w1" correct eval all_reduce problems/all_reduce/examples/uva.cu dtype=bf16 --world 1
run "all_reduce-uva-bf16-w2" correct eval all_reduce problems/all_reduce/examples/uva.cu dtype=bf16 --world 2
fi

if want wrong; then
echo "== wrong kernels (worlds 2 and 4, emulated: most planted bugs misplace a peer's data, which world 1 cannot show)"
for p in $problems; do
  for b in "$bugs/$p"-*.cu; do
    for w in 2 4; do run "$(basename "$b" .cu)-w$w" mismatch eval "$p" "$b" --world "$w"; done
  done
done
fi

if want deadlock; then
echo "== deadlock, then the next eval on the same GPU"
run "deadlock-w2" timeout eval all_reduce tests/kernels/cuda/deadlock.cu --world 2 --call-limit 5
echo "left behind: $(pgrep -c kforge-rank || true) kforge-rank processes $(ps -o pid=,stat= -C kforge-rank | tr '\n' ' ')"
run "after-deadlock-w1" correct eval all_reduce problems/all_reduce/examples/uva.cu --world 1
run "deadlock-w1" timeout eval all_reduce tests/kernels/cuda/deadlock.cu --world 1 --call-limit 5
run "after-deadlock-w1b" correct eval all_reduce problems/all_reduce/examples/uva.cu --world 2
fi

if want rankkill; then
echo "== a rank killed from outside (kill -9 of rank 1's process while its kernel deadlocks)"
"$K" eval all_reduce tests/kernels/cuda/deadlock.cu --world 2 --call-limit 30 --json \
  >"$out/j/rankkill-w2.json" 2>"$out/j/rankkill-w2.err" &
evalpid=$!
for i in $(seq 150); do
  sleep 0.2
  victim=""
  # The rank itself is the child of the kforge-rank mpirun started (sandbox/rank/reaper.h).
  for p in $(pgrep -x kforge-rank); do
    pp=$(ps -o ppid= -p "$p" | tr -d ' ')
    [ "$(cat "/proc/$pp/comm" 2>/dev/null)" = kforge-rank ] &&
      tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && victim=$p
  done
  if [ -n "$victim" ] && [ "$(pgrep -c kforge-runner)" -ge 2 ]; then
    sleep 3  # inside the deadlocked call by now
    kill -9 "$victim" && echo "killed rank 1 (pid $victim) after $(( i / 5 + 3 )) s"
    break
  fi
done
wait "$evalpid"
python3 - "$out/j/rankkill-w2.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print("ok " if v["status"] == "crash" else "BAD", "rankkill-w2", v["status"], "|", v["summary"][:200])
PY
echo "left behind: $(pgrep -c kforge-rank || true) kforge-rank processes"
run "after-rankkill-w1" correct eval all_reduce problems/all_reduce/examples/uva.cu --world 1
fi

if want deadline; then
echo "== kf::wait's debug deadline (1 s) turns a planted deadlock into a crash naming rank and signal"
for w in 1 2; do
  run "deadline-w$w" crash eval all_reduce tests/kernels/cuda/deadline.cu --world "$w" --call-limit 20
  python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print('   ', json.dumps(v)[:1500])" "$out/j/deadline-w$w.json"
done
run "after-deadline-w1" correct eval all_reduce problems/all_reduce/examples/uva.cu --world 1
fi

if want baselines; then
echo "== NCCL baselines (world 1)"
for p in $problems; do run "$p-baseline-w1" correct baseline "$p" --world 1; done
fi

if want solutions; then
echo "== expert solutions"
for p in $problems; do
  for s in problems/$p/solution*.cu; do
    [ -f "$s" ] || continue
    n=$(basename "$s" .cu)
    for w in $worlds; do run "$p-$n-w$w" correct eval "$p" "$s" --world "$w"; done
  done
done
fi

if want families; then
echo "== every family of every search.json's CUDA kernels, its macros in front (checked, not timed)"
fams="$out/families"
mkdir -p "$fams"
# FAMILIES ("problem--algo ...") narrows them (one call has 10 minutes).
python3 - "$fams" "${FAMILIES:-}" $problems <<'PY'
import json, os, sys
out, only, probs = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
for p in probs:
    path = f"problems/{p}/search.json"
    if not os.path.exists(path): continue
    for f in json.load(open(path))["families"]:
        if not f["source"].endswith(".cu") or not f.get("macros"): continue
        defs = "".join(f"#define {k} {v}\n" for k, v in f["macros"].items())
        name = f"{p}--{f['algo']}"
        if only and name not in only: continue
        open(f"{out}/{name}.cu", "w").write(defs + open(f"problems/{p}/{f['source']}").read())
        print(name)
PY
for k in "$fams"/*.cu; do
  [ -f "$k" ] || continue
  n=$(basename "$k" .cu); p=${n%%--*}
  for w in $worlds; do
    run "$n-w$w-small" correct eval "$p" "$k" --world "$w" --size small --no-time
    run "$n-w$w-full" correct eval "$p" "$k" --world "$w" --no-time
  done
done
fi

if want variants; then
echo "== every mechanism and algorithm of the expert kernels, odd sizes (checked, not timed)"
for v in $variants; do
  IFS=: read -r p name _ <<<"$v"
  [[ " $problems " == *" $p "* ]] || continue
  k="$vdir/$p-$name.cu"
  for w in $worlds; do
    run "$p-$name-w$w-small" correct eval "$p" "$k" --world "$w" --size small --no-time
    run "$p-$name-w$w-n1000003" correct eval "$p" "$k" --world "$w" --size small n=1000003 --no-time
  done
  run "$p-$name-w4-n1" correct eval "$p" "$k" --world 4 --size small n=1 --no-time
  [ "$p" = all_reduce ] || [ "$p" = reduce_scatter ] && run "$p-$name-w2-bf16" correct eval "$p" "$k" --world 2 --size small dtype=bf16 n=1000003 --no-time
done
fi

if want solve; then
echo "== kforge solve with the builtin provider, then replay of its trajectory"
for w in 2 1; do
  "$K" solve all_reduce --model builtin --world "$w" --headless --max-turns 6 --out "$out/solve-w$w" >"$out/solve-w$w.jsonl" 2>"$out/solve-w$w.err"
  echo "solve --world $w: rc=$? $(tail -1 "$out/solve-w$w.jsonl" | cut -c1-400)"
  traj=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])['trajectory'])" "$out/solve-w$w.jsonl" 2>/dev/null)
  if [ -n "$traj" ]; then
    "$K" replay "$traj" >"$out/replay-w$w.txt" 2>&1
    echo "replay --world $w: rc=$?"; tail -8 "$out/replay-w$w.txt"
    cp "$traj" "$out/solve-w$w.trajectory.jsonl"
  fi
done
fi

if want tune; then
echo "== kforge tune (the builtin template search alone), world 1"
for p in all_reduce all_gather; do
  "$K" tune "$p" --world 1 --budget 8 --out "$out/tune-$p-best.cu" >"$out/tune-$p.txt" 2>&1
  echo "tune $p: rc=$?"; tail -14 "$out/tune-$p.txt"
done
fi

if want sweep; then
echo "== bench/collectives_sweep.sh at world 1 (one GPU: no NVLink traffic; proves the script, not the speed)"
SIZES="${SWEEP_SIZES:-4096 1048576 268435456}" KFORGE="$K" OUT="$out" bash bench/collectives_sweep.sh 1
fi

if want mechanisms; then
echo "== mechanisms within one GPU (bench/mechanisms.cu)"
nvcc -O3 -std=c++17 -arch=sm_90 -I primitives/include -o /tmp/kf-mech bench/mechanisms.cu && /tmp/kf-mech | tee "$out/mechanisms.txt"
fi


if want isolation; then
echo "== isolation cost"
K="$K" bench/isolation_cost.sh
fi

if want latency; then
echo "== eval latency"
KFORGE="$K" bench/eval_latency.sh all_reduce problems/all_reduce/examples/uva.cu 1
KFORGE="$K" bench/eval_latency.sh all_reduce problems/all_reduce/examples/uva.cu 2
fi

echo "== timings (world 1, full size): candidate vs NCCL"
python3 - "$out/j" <<'PY'
import json, glob, os, sys
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*-w1.json"))):
    try: v = json.load(open(f))
    except Exception: continue
    if v.get("status") != "correct" or not v.get("timed"): continue
    c = v.get("candidate_time", {}); b = v.get("baseline_time", {})
    rows.append((os.path.basename(f)[:-5], c.get("median_ms", 0), c.get("p10_ms", 0), c.get("p90_ms", 0),
                 b.get("median_ms", 0), v.get("speedup", 0), v.get("busbw_gbps", 0), v.get("pct_roofline", 0)))
print(f"{'run':<34} {'median ms':>10} {'p10':>8} {'p90':>8} {'NCCL ms':>9} {'speedup':>8} {'busbw':>8} {'%roof':>6}")
for r in rows:
    print(f"{r[0]:<34} {r[1]:>10.4f} {r[2]:>8.4f} {r[3]:>8.4f} {r[4]:>9.4f} {r[5]:>8.2f} {r[6]:>8.1f} {r[7]:>6.1f}")
PY
