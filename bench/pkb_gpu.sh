#!/usr/bin/env bash
# bench/pkb_gpu.sh PKB_DIR: ParallelKernelBench (a user's checkout at PKB_DIR, carried to
# the lent GPU machine, never committed) through kforge, in one call:
#  1. problem 1 (all-reduce), PKB's reference as its own candidate: kforge's eval (five
#     trials, PKB's default) twice, then PKB's own run_local.py --mode eval on the same
#     file, five trials and one, each timed on the wall clock; the per-trial speedups of
#     kforge's evals and their spread;
#  2. every reference at world 1 as its own candidate through `kforge eval --suite`, one
#     trial, JOBS at a time (a count of what runs; these times shared the GPU, so they
#     are no speed), each limited to REF_S seconds (default 180; 48_fsdp_and_tp's 112 ms
#     calls, 500 warmup and 100 timed a side, take longer), the whole part to PART2_S.
#  3. overhead: python's and torch's start, torchrun's own (kforge starts the ranks itself),
#     and kforge's eval of problem 1
#     with each rank's timeline (seconds since the driver started, at each phase);
#  4. parity: bench/pkb_parity.py on bench/pkb_solutions (problems PARITY5 at five trials,
#     PARITY2 at two: PKB's harness takes about 20 s a trial; "-" skips one).
#  5. spread: kforge's five-trial eval of the hand-written solutions of SPREAD (default
#     "1 3 13 18"), twice each, with the per-trial speedups, their spread, and each trial's
#     rounds' p10-p90 (which trial moved, and whether its rounds disagreed).
#  6. tamper: bench/pkb_tamper's cheats (its README says what each must get: rejected,
#     a mismatch in the timed calls or on an input) and one through torch.compile (correct),
#     one trial each, under the default --timed-check clones.
#  7. cheats: bench/pkb_parity.py --cheats on bench/pkb_tamper's cheats of problems CHEATS
#     (default 1), one trial: what PKB's run_local.py says of them beside kforge.
#  8. last: bench/pkb_tamper's cheats under --timed-check last (pkb_fresh.FreshLast, the
#     weaker check), one trial each: what only the default catches.
#  9. modes: the hand-written solutions of SPREAD, five trials, under --timed-check last
#     and clones in turn: whether the stronger check moves speedups.
# 10. rounds: the driver alone (sandbox/pkb/pkb_eval.py, no kforge around it) on the
#     hand-written solutions of SPREAD, five trials, with each ROUNDS:MIN_MS of ROUNDS
#     (default "20:200 40:200 40:400": the driver's --rounds and --min-ms, its timed
#     milliseconds a side a trial) in turn, twice: whether more rounds, or longer ones,
#     narrow the per-trial spread, and what they cost (the driver's own seconds).
# 11. sweep: `kforge sweep` over the problems of SWEEP (default "1 49"), two samples each, one
#     turn, world 1, against the loopback model server (tests/fake_llm) answering each
#     problem with its reference: a problem whose reference fails on one GPU (49 needs two
#     ranks) is recorded not runnable after one model call, and the sweep goes on.
# PARTS="p1 refs overhead parity spread tamper cheats last modes rounds sweep" picks the parts; FROM=N starts part 2 at problem N,
# ONLY="48 68" runs only those problems in it (a rerun), TIMED_CHECK=last checks its timed calls so.
# Writes the verdicts under $OUT/pkb/ and prints one line each.
set -uo pipefail
pkb="$(cd "${1:?usage: bench/pkb_gpu.sh PKB_DIR}" && pwd)"
out="${OUT:-/tmp/kf-gpu}"
mkdir -p "$out/pkb"
build="${KF_BUILD_DIR:-build-gpu}"
source bench/gpu_build.sh || exit 1
K="$(pwd)/$build/kforge"
export KFORGE_RUNS="$out/runs"
export KF_PYTHON="${KF_PYTHON:-/opt/torch/.venv/bin/python3}"
py="$KF_PYTHON"
torchrun="$(dirname "$py")/torchrun"
echo "python: $py ($("$py" -c 'import torch; print("torch", torch.__version__)' 2>&1))"

# summary FILE LABEL WALL: one line from a verdict, with the per-trial speedups of the
# newest eval folder (rank 0's trials; at world 1 the only rank).
summary() {
  python3 - "$1" "$2" "$3" "$KFORGE_RUNS/evals" <<'PY'
import glob, json, os, statistics, sys
sys.path.insert(0, "bench")
from driver_phases import driver_seconds
path, label, wall, evals = sys.argv[1:]
try:
    v = json.load(open(path))
except Exception:
    print(f"BAD {label:<44} no verdict ({open(path.replace('.json', '.err')).read()[-200:]!r})")
    sys.exit()
line = f"{label:<44} {v['status']:<13} wall {float(wall):6.1f}s  speedup {v.get('speedup', 0):.3f}"
dirs = sorted(glob.glob(os.path.join(evals, "*")), key=os.path.getmtime)
try:
    rank0 = json.load(open(os.path.join(dirs[-1], "rank0.json")))
    trials = rank0["trials"]
    s = [t.get("speedup") or t["ref_ms"] / t["cand_ms"] for t in trials if t.get("cand_ms")]
    if len(s) > 1:
        line += f"  per trial {min(s):.3f}-{max(s):.3f} (spread {100 * (max(s) - min(s)) / statistics.median(s):.1f}%)"
        # Each trial's speedup in order, and the spread of its rounds' (p10-p90 over the
        # median): which trial moved, and whether its rounds disagreed or all shifted.
        rounds = []
        for t in trials:
            r = sorted(t.get("round_speedups") or [])
            if len(r) >= 5:
                rounds.append(f"{100 * (r[len(r) * 9 // 10] - r[len(r) // 10]) / statistics.median(r):.0f}%")
        line += "  trials " + " ".join(f"{x:.3f}" for x in s)
        if rounds:
            line += " (rounds p10-p90 " + " ".join(rounds) + ")"
        # Where the driver's time went (the wall also holds kforge's start and python's
        # before the driver's).
        if rank0.get("timeline"):
            line += "  " + driver_seconds(rank0)
except Exception:
    pass
print(line + "  " + v.get("summary", "").splitlines()[0][:120])
PY
}

parts=" ${PARTS:-p1 refs} "
if [[ "$parts" == *" warm "* ]]; then
# Problem 1's reference as WARM_N candidates of one `kforge solve` (bench/replay_of.py: the
# agent loop evaluates exactly these files): through the warm interpreter (src/pkb/warm.h),
# then the same with --ranks cold (a python started per eval), then as `kforge eval`s
# through a `kforge serve`. Seconds per eval as the trajectory records them.
echo "== problem 1 through kforge solve, ${WARM_N:-5} evals of the reference, warm interpreter and cold"
ref1="$pkb/reference/1_allreduce.py"
for ranks in warm cold; do
  files=(); for _ in $(seq 1 "${WARM_N:-5}"); do files+=("$ref1"); done
  python3 bench/replay_of.py "$out/pkb/warm-$ranks.jsonl" "${files[@]}"
  t0=$(date +%s.%N)
  "$K" solve --suite "pkb:$pkb" 1 --model "replay:$out/pkb/warm-$ranks.jsonl" --headless --world 1 \
    --max-turns "${WARM_N:-5}" --target 1e9 --ranks "$ranks" --out "$out/pkb/warm-$ranks" \
    >"$out/pkb/warm-$ranks.out" 2>"$out/pkb/warm-$ranks.err"
  echo "-- $ranks: wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
  python3 - "$out/pkb/warm-$ranks.out" <<'PY'
import glob, json, os, sys
sys.path.insert(0, "bench")
from driver_phases import driver_seconds
traj = ""
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "result":
        traj = e.get("trajectory", "")
n = 0
for l in open(traj) if traj else []:
    e = json.loads(l)
    if e.get("type") != "verdict":
        continue
    n += 1
    v = e.get("verdict", {})
    warm = [x for x in v.get("harness_notes", []) if x.startswith("warm interpreter")]
    print(f"eval {n}: {e.get('seconds', 0):6.2f} s  {v.get('status')}  speedup {v.get('speedup', 0):.3f}  "
          f"{(warm[0][:90] if warm else 'cold')}")
    # A warm eval's driver phases (rank 0's timeline, seconds): what the interpreter leaves.
    if warm and warm[0].startswith("warm interpreter: eval "):
        root = warm[0].split(" of ", 1)[1].split(" (", 1)[0]
        ranks = sorted(glob.glob(os.path.join(root, "*", "rank0.json")), key=os.path.getmtime)
        if len(ranks) >= n:
            print("        " + driver_seconds(json.load(open(ranks[n - 1])), 2))
PY
  tail -3 "$out/pkb/warm-$ranks.err" | grep -v ", trajectory " || true
done
# The same reference as WARM_N `kforge eval`s through a `kforge serve` (a script's or CI's
# way): wall time of each command, and whether the server's interpreter served it.
"$K" serve --socket "$out/pkb/serve.sock" 2>"$out/pkb/serve.err" &
server=$!
for _ in $(seq 1 50); do [ -S "$out/pkb/serve.sock" ] && break; sleep 0.1; done
echo "-- kforge eval through kforge serve"
for i in $(seq 1 "${WARM_N:-5}"); do
  t0=$(date +%s.%N)
  KFORGE_SERVE="$out/pkb/serve.sock" "$K" eval --suite "pkb:$pkb" 1 "$ref1" --world 1 --json \
    >"$out/pkb/served-$i.json" 2>"$out/pkb/served-$i.err"
  wall=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}")
  python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
w = [x for x in v.get("harness_notes", []) if x.startswith(("warm interpreter", "kforge serve"))]
st, sp, how = v.get("status"), v.get("speedup", 0), w[0][:90] if w else "cold"
print("eval %s: wall %s s  %s  speedup %.3f  %s" % (sys.argv[2], sys.argv[3], st, sp, how))' \
    "$out/pkb/served-$i.json" "$i" "$wall" 2>/dev/null || echo "eval $i: wall $wall s, no verdict: $(tail -c 300 "$out/pkb/served-$i.err")"
done
kill -INT "$server"; wait "$server" 2>/dev/null
fi
if [[ "$parts" == *" p1 "* ]]; then
echo "== problem 1: kforge's eval and PKB's run_local.py, the reference as the candidate"
ref1="$pkb/reference/1_allreduce.py"
for i in 1 2; do
  t0=$(date +%s.%N)
  "$K" eval --suite "pkb:$pkb" 1 "$ref1" --world 1 --json >"$out/pkb/p1-kforge-$i.json" 2>"$out/pkb/p1-kforge-$i.err"
  summary "$out/pkb/p1-kforge-$i.json" "kforge eval (5 trials) #$i" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")"
done
sol="$out/pkb/solutions"
mkdir -p "$sol"
cp "$ref1" "$sol/1_allreduce_cuda.py"
for trials in ${P1_PKB_TRIALS:-5 1}; do
  t0=$(date +%s.%N)
  (cd "$pkb" && timeout 300 "$py" run_local.py --mode eval --problem 1 --solution cuda \
    --solutions-dir "$sol" --nproc-per-node 1 --measure-perf --trials "$trials" \
    --logs-dir "$out/pkb/logs-$trials") >"$out/pkb/p1-pkb-$trials.log" 2>&1
  rc=$?
  echo "PKB run_local.py --trials $trials: rc=$rc wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s"
  grep -iE "speedup|pass|fail|correct|mismatch|error" "$out/pkb/p1-pkb-$trials.log" | tail -6
done

fi

if [[ "$parts" == *" overhead "* ]]; then
echo "== where a job's seconds go: python and torch start, torchrun's own start, kforge's eval"
t0=$(date +%s.%N); "$py" -c 'pass'; echo "python3 -c pass: $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s"
t0=$(date +%s.%N); "$py" -c 'import torch, torch.distributed'; echo "import torch: $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s"
echo 'pass' >"$out/pkb/empty.py"
t0=$(date +%s.%N); "$torchrun" --standalone --nproc-per-node 1 "$out/pkb/empty.py" >/dev/null 2>&1
echo "torchrun of an empty script: $(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}") s"
for i in 1 2; do
  t0=$(date +%s.%N)
  "$K" eval --suite "pkb:$pkb" 1 "$pkb/reference/1_allreduce.py" --world 1 --json >"$out/pkb/ov-$i.json" 2>&1
  summary "$out/pkb/ov-$i.json" "kforge eval, reference 1 (5 trials) #$i" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")"
  python3 -c 'import glob, json, os, sys; d = sorted(glob.glob(sys.argv[1] + "/evals/*"), key=os.path.getmtime)[-1]; print("  timeline:", json.load(open(d + "/rank0.json")).get("timeline"))' "$KFORGE_RUNS"
done
fi

if [[ "$parts" == *" parity "* ]]; then
echo "== parity: PKB's run_local.py and kforge's evaluator on the same hand-written solutions"
[ "${PARITY5:-1}" = - ] || "$py" bench/pkb_parity.py --pkb "$pkb" --kforge "$K" --solutions bench/pkb_solutions \
  --out "$out/pkb/parity-5" --python "$py" --only "${PARITY5:-1}" --trials 5 --kforge-runs 2
[ "${PARITY2:-3,7,13,18}" = - ] || "$py" bench/pkb_parity.py --pkb "$pkb" --kforge "$K" --solutions bench/pkb_solutions \
  --out "$out/pkb/parity-2" --python "$py" --only "${PARITY2:-3,7,13,18}" --trials 2
fi

if [[ "$parts" == *" spread "* ]]; then
echo "== per-trial spread: kforge's five-trial eval of the hand-written solutions, twice each"
for p in ${SPREAD:-1 3 13 18}; do
  f=$(ls bench/pkb_solutions/${p}_*_cuda.py | head -1)
  for i in 1 2; do
    t0=$(date +%s.%N)
    "$K" eval --suite "pkb:$pkb" "$p" "$f" --world 1 --json >"$out/pkb/spread-$p-$i.json" 2>"$out/pkb/spread-$p-$i.err"
    summary "$out/pkb/spread-$p-$i.json" "kforge eval $(basename "$f") #$i" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")"
  done
done
fi

if [[ "$parts" == *" tamper "* ]]; then
echo "== tamper: what a candidate changes in the process it shares with the check"
for f in bench/pkb_tamper/[0-9]*_*.py; do
  t0=$(date +%s.%N)
  stem=$(basename "$f" .py)
  "$K" eval --suite "pkb:$pkb" "${stem%%_*}" "$f" --world 1 --trials 1 --json >"$out/pkb/tamper-$stem.json" 2>"$out/pkb/tamper-$stem.err"
  summary "$out/pkb/tamper-$stem.json" "kforge eval $stem" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")"
done
fi

if [[ "$parts" == *" cheats "* ]]; then
echo "== cheats: PKB's run_local.py and kforge's evaluator on bench/pkb_tamper's cheats"
"$py" bench/pkb_parity.py --pkb "$pkb" --kforge "$K" --cheats bench/pkb_tamper \
  --out "$out/pkb/parity-cheats" --python "$py" --only "${CHEATS:-1}" --trials 1
fi

if [[ "$parts" == *" last "* ]]; then
echo "== --timed-check last: the cheats"
for f in bench/pkb_tamper/[0-9]*_*.py; do
  t0=$(date +%s.%N)
  stem=$(basename "$f" .py)
  "$K" eval --suite "pkb:$pkb" "${stem%%_*}" "$f" --world 1 --trials 1 --timed-check last --json \
    >"$out/pkb/last-$stem.json" 2>"$out/pkb/last-$stem.err"
  summary "$out/pkb/last-$stem.json" "last: kforge eval $stem" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")"
done
fi

if [[ "$parts" == *" modes "* ]]; then
echo "== --timed-check last and clones in turn: the hand-written solutions, five trials"
for p in ${SPREAD:-1 3 13 18}; do
  f=$(ls bench/pkb_solutions/${p}_*_cuda.py | head -1)
  for mode in last clones; do
    t0=$(date +%s.%N)
    "$K" eval --suite "pkb:$pkb" "$p" "$f" --world 1 --timed-check $mode --json \
      >"$out/pkb/mode-$p-$mode.json" 2>"$out/pkb/mode-$p-$mode.err"
    summary "$out/pkb/mode-$p-$mode.json" "$mode: kforge eval $(basename "$f")" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")"
  done
done
fi

if [[ "$parts" == *" rounds "* ]]; then
echo "== rounds a trial: the driver alone, five trials, twice for each count"
for p in ${SPREAD:-1 3 13 18}; do
  f=$(ls bench/pkb_solutions/${p}_*_cuda.py | head -1)
  ref=$(ls "$pkb"/reference/${p}_*.py | head -1)
  for i in 1 2; do
    for rm in ${ROUNDS:-20:200 40:200 40:400}; do
      r=${rm%%:*} ms=${rm##*:}
      d="$out/pkb/rounds-$p-$r-$ms-$i"
      "$py" sandbox/pkb/pkb_eval.py --nproc 1 --pkb "$pkb" --problem-id "$p" --reference "$ref" \
        --solution "$f" --out "$d" --rounds "$r" --min-ms "$ms" --ext-cache "$out/pkb/ext" >"$d.log" 2>&1
      python3 - "$d/rank0.json" "$(basename "$f") rounds $r min-ms $ms #$i" <<'PY'
import json, statistics, sys
try:
    rank0 = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit(print(f"BAD {sys.argv[2]}: no report ({e})"))
s = [t["speedup"] for t in rank0["trials"]]
if not s:
    sys.exit(print(f"{sys.argv[2]:<40} {rank0['status']}: {rank0.get('message', '')[:200]}"))
spread = 100 * (max(s) - min(s)) / statistics.median(s)
print(f"{sys.argv[2]:<40} {rank0['status']:<8} speedup {statistics.median(s):.3f}  trials "
      + " ".join(f"{x:.3f}" for x in s) + f"  spread {spread:.1f}%  driver {rank0['timeline'][-1][1]:.1f} s")
PY
    done
  done
done
fi

if [[ "$parts" == *" sweep "* ]]; then
echo "== kforge sweep over PKB problems ${SWEEP:-1 49}, a loopback model answering with each reference"
if ! cmake --build "$build" --target fake_llm_server >"$out/build-fake.log" 2>&1; then
  tail -20 "$out/build-fake.log"
else
  sw="$out/pkb/sweep"
  rm -rf "$sw"; mkdir -p "$sw"
  # Two steps a problem: a sample that learns its problem cannot run makes the only call.
  python3 - "$pkb" "$sw/script.json" ${SWEEP:-1 49} <<'PY'
import glob, json, os, sys
pkb, path, problems = sys.argv[1], sys.argv[2], sys.argv[3:]
steps = []
for n in problems:
    ref = glob.glob(os.path.join(pkb, "reference", f"{n}_*.py"))[0]
    text = "```python\n" + open(ref).read() + "\n```\n"
    body = {"id": "c", "object": "chat.completion", "model": "reference",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    steps += [{"when": f"ParallelKernelBench problem {n} (", "body": body}] * 2
json.dump(steps, open(path, "w"))
PY
  "$build/fake_llm_server" --script "$sw/script.json" --log "$sw/requests.jsonl" \
    --port-file "$sw/port" --idle-s 300 >"$sw/server.log" 2>&1 &
  for _ in $(seq 50); do [ -s "$sw/port" ] && break; sleep 0.1; done
  problems=$(echo ${SWEEP:-1 49} | tr ' ' ',')
  t0=$(date +%s.%N)
  "$K" sweep "$problems" --suite "pkb:$pkb" --world 1 --samples 2 --jobs 1 --max-turns 1 \
    --model openai:reference --api-key-env none --base-url "http://127.0.0.1:$(cat "$sw/port")/v1" \
    --out "$sw/out" >"$sw/sweep.log" 2>&1
  echo "kforge sweep: rc=$? wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s, model calls $(wc -l <"$sw/requests.jsonl")"
  tail -12 "$sw/sweep.log"
  kill %1 2>/dev/null
fi
fi

[[ "$parts" == *" refs "* ]] || exit 0
echo "== every reference as its own candidate, world 1, one trial, ${JOBS:-4} at a time"
export K pkb out REF_S="${REF_S:-180}" TIMED_CHECK="${TIMED_CHECK:-clones}"
t0=$(date +%s)
ls "$pkb"/reference/[0-9]*_*.py | sort -V |
  awk -F/ -v from="${FROM:-1}" -v only=" ${ONLY:-} " '{ split($NF, a, "_"); if (a[1] + 0 >= from && (only == "  " || index(only, " " a[1] " "))) print }' |
  timeout "${PART2_S:-300}" xargs -P "${JOBS:-4}" -I{} sh -c '
    f={}; stem=$(basename "$f" .py)
    timeout "$REF_S" "$K" eval --suite "pkb:$pkb" "$stem" "$f" --world 1 --trials 1 --timed-check "$TIMED_CHECK" --json \
      >"$out/pkb/ref-$stem.json" 2>"$out/pkb/ref-$stem.err"'
echo "part 2 took $(( $(date +%s) - t0 )) s"
python3 - "$out/pkb" "$pkb" <<'PY'
import collections, glob, json, os, sys
d, pkb = sys.argv[1:]
counts, lines, noted = collections.Counter(), [], collections.Counter()
for f in sorted(glob.glob(os.path.join(pkb, "reference", "[0-9]*_*.py")),
                key=lambda p: int(os.path.basename(p).split("_")[0])):
    stem = os.path.basename(f)[:-3]
    try:
        v = json.load(open(os.path.join(d, f"ref-{stem}.json")))
        st, why = v["status"], v.get("summary", "").splitlines()[0][:150]
        # What the person is told of how it was timed: outputs unchecked, clones not had,
        # a warm-up cut short (src/pkb/evaluate.cpp's add_trial_notes).
        for key, said in (("timed outputs unchecked", "not checked on fresh inputs"),
                          ("clones not had", "clones could not be had"),
                          ("warm-up cut", "the warm-up made fewer calls")):
            notes = [n for n in v.get("harness_notes", []) if said in n]
            if notes:
                noted[key] += 1
                why += " | " + notes[0][:200]
        if st != "correct":
            why += " | " + " / ".join(v.get("log", "").strip().splitlines()[-3:])[-300:]
    except Exception:
        err = os.path.join(d, f"ref-{stem}.err")
        said = open(err).read().strip() if os.path.exists(err) else ""
        # kforge's error where the reference fails on this setup alone (no verdict: exit 2)
        st = "reference fails" if "PKB's reference fails" in said else "not run"
        why = (said.splitlines() or [""])[-1][-300:] if os.path.exists(err) else "(not reached)"
    counts[st] += 1
    lines.append(f"{stem:<48} {st:<13} {why}")
print("\n".join(lines))
print("counts:", dict(counts), "of", sum(counts.values()), "; notes:", dict(noted))
PY
