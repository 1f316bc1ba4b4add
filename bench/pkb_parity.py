#!/usr/bin/env python3
"""bench/pkb_parity.py: the parity check between ParallelKernelBench's own harness and
kforge's evaluator. Each solution (bench/pkb_solutions/<stem>_cuda.py, PKB's format) is
evaluated by PKB's `run_local.py --mode eval --measure-perf` and by `kforge eval --suite
pkb:PATH`, on the same machine, one after the other, with the same number of trials; the
two verdicts (correct or not) and speedups are compared, and each harness's wall time and
per-trial spread reported. A disagreement is listed with both harnesses' words.

Usage (on the GPU machine): pkb_parity.py --pkb CHECKOUT --kforge BUILD/kforge
  --solutions bench/pkb_solutions --out DIR [--trials 5] [--python PY] [--only 1,3]
  [--kforge-runs 2]
Needs KFORGE_RUNS set (the evals' folders are read for the per-trial times).
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

TRIAL = re.compile(r"trial (\d+): (match|mismatch).*?ref ([\d.]+) ms \| \w+ ([\d.]+) ms \| speedup ([\d.]+)x")


def spread(values):
    """(max - min) / median, in percent; None for fewer than two values."""
    if len(values) < 2:
        return None
    return 100.0 * (max(values) - min(values)) / statistics.median(values)


def run_kforge(a, number, solution):
    t0 = time.time()
    p = subprocess.run([a.kforge, "eval", "--suite", "pkb:" + a.pkb, str(number), solution, "--world", "1",
                        "--trials", str(a.trials), "--json"], capture_output=True, text=True)
    wall = time.time() - t0
    try:
        v = json.loads(p.stdout)
    except ValueError:
        return {"ok": False, "status": "no verdict", "wall_s": wall, "said": p.stderr[-400:]}
    evals = sorted(glob.glob(os.path.join(os.environ["KFORGE_RUNS"], "evals", "*")), key=os.path.getmtime)
    per_trial, timeline = [], []
    try:
        rank0 = json.load(open(os.path.join(evals[-1], "rank0.json")))
        per_trial = [t.get("speedup") or t["ref_ms"] / t["cand_ms"] for t in rank0.get("trials", []) if t.get("cand_ms")]
        timeline = rank0.get("timeline", [])
    except (IndexError, OSError, ValueError):
        pass
    return {"ok": v.get("status") == "correct", "status": v.get("status"), "speedup": v.get("speedup"),
            "per_trial": per_trial, "wall_s": wall, "said": v.get("summary", "")[:300], "timeline": timeline}


def run_pkb(a, number, solution_dir):
    t0 = time.time()
    p = subprocess.run([a.python, "run_local.py", "--mode", "eval", "--problem", str(number), "--solution", "cuda",
                        "--solutions-dir", solution_dir, "--nproc-per-node", "1", "--measure-perf",
                        "--trials", str(a.trials), "--logs-dir", os.path.join(a.out, "pkb-logs-%d" % number)],
                       cwd=a.pkb, capture_output=True, text=True)
    wall = time.time() - t0
    out = p.stdout + p.stderr
    trials = [(int(m.group(1)), m.group(2), float(m.group(5))) for m in TRIAL.finditer(out)]
    ok = "all trials match" in p.stdout
    said = next((l.strip() for l in p.stdout.splitlines() if re.search(r"trial \d+: mismatch", l)), "")
    return {"ok": ok, "rc": p.returncode, "per_trial": [s for _, _, s in trials],
            "speedup": statistics.median([s for _, _, s in trials]) if trials else None, "wall_s": wall,
            "said": said[:300] or ("all trials match" if ok else out[-300:])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pkb", required=True)
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--solutions", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only", default="", help="problem numbers, comma-separated (default: every solution)")
    ap.add_argument("--kforge-runs", type=int, default=1,
                    help="kforge evals per solution; the last is compared (the first builds any extension)")
    a = ap.parse_args()
    a.pkb, a.solutions = os.path.abspath(a.pkb), os.path.abspath(a.solutions)
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for path in sorted(glob.glob(os.path.join(a.solutions, "*_cuda.py")),
                       key=lambda p: int(os.path.basename(p).split("_")[0])):
        number = int(os.path.basename(path).split("_")[0])
        if a.only and str(number) not in a.only.split(","):
            continue
        walls = []
        for _ in range(max(1, a.kforge_runs)):
            k = run_kforge(a, number, path)
            walls.append(round(k["wall_s"], 1))
        k["walls_s"] = walls
        p = run_pkb(a, number, a.solutions)
        agree = k["ok"] == p["ok"]
        ratio = k["speedup"] / p["speedup"] if k["ok"] and p["ok"] and k["speedup"] and p["speedup"] else None
        rows.append({"solution": os.path.basename(path), "kforge": k, "pkb": p, "verdicts_agree": agree,
                     "speedup_ratio": ratio})
        fmt = lambda s: "-" if s is None else "%.1f%%" % s
        print("%-28s kforge %-9s %6s (spread %6s, %5.1f s) | PKB %-8s %6s (spread %6s, %5.1f s) | %s%s" % (
            os.path.basename(path), k["status"], "%.3fx" % k["speedup"] if k.get("speedup") else "-",
            fmt(spread(k["per_trial"])), k["wall_s"], "match" if p["ok"] else "mismatch",
            "%.3fx" % p["speedup"] if p["speedup"] else "-", fmt(spread(p["per_trial"])), p["wall_s"],
            "agree" if agree else "DISAGREE", "" if ratio is None else ", kforge/PKB speedup %.3f" % ratio))
        if len(walls) > 1:
            print("    kforge walls, first builds any extension: %s s" % walls)
        if not agree:
            print("    kforge: %s\n    PKB:    %s" % (k["said"], p["said"]))
        if k["timeline"]:
            print("    kforge rank 0 timeline: " + ", ".join("%s %.2fs" % (n, t) for n, t in k["timeline"]))
        sys.stdout.flush()
    json.dump(rows, open(os.path.join(a.out, "parity.json"), "w"), indent=1)
    bad = [r["solution"] for r in rows if not r["verdicts_agree"]]
    print("%d solutions, verdicts agree on %d%s" % (len(rows), len(rows) - len(bad),
                                                    "; disagree: " + ", ".join(bad) if bad else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
