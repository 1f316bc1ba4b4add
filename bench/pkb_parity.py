#!/usr/bin/env python3
"""bench/pkb_parity.py: the parity check between ParallelKernelBench's own harness and
kforge's evaluator. Each solution (bench/pkb_solutions/<stem>_cuda.py, PKB's format) is
evaluated by PKB's `run_local.py --mode eval --measure-perf` and by `kforge eval --suite
pkb:PATH`, on the same machine, one after the other, with the same number of trials; the
two verdicts (correct or not) and speedups are compared, and each harness's wall time and
per-trial spread reported. A disagreement is listed with both harnesses' words, and
explained where kforge failed the solution by a rule PKB does not have (kforge_only()).
--cheats DIR runs the cheats of bench/pkb_tamper (<number>_<what>.py) the same way, each
copied under the name PKB looks for: there the two are expected to disagree.

Usage (on the GPU machine): pkb_parity.py --pkb CHECKOUT --kforge BUILD/kforge
  (--solutions bench/pkb_solutions | --cheats bench/pkb_tamper) --out DIR [--trials 5]
  [--python PY] [--only 1,3] [--kforge-runs 2]
Needs KFORGE_RUNS set (the evals' folders are read for the per-trial times).
"""
import argparse
import glob
import json
import os
import re
import shutil
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
            "per_trial": per_trial, "wall_s": wall, "said": v.get("summary", "")[:300], "timeline": timeline,
            "failure": (v.get("failures") or [{}])[0]}


def kforge_only(k):
    """Why kforge failed a solution by a rule PKB's harness does not have, or ""."""
    f = k.get("failure") or {}
    if k["status"] == "rejected":
        return "kforge rejects a change to what the check or the timer calls (PKB runs each side in a job of its own)"
    if k["status"] != "mismatch":
        return ""
    if f.get("tensor", "").startswith("input_"):
        return "kforge requires inputs left as the reference leaves them (PKB checks no input)"
    if "in the timed calls" in f.get("message", ""):
        return "kforge checks timed calls' outputs on fresh inputs (PKB checks only the one call per trial)"
    if ": dtype " in f.get("message", ""):
        return "kforge requires the reference's dtypes (PKB compares values only)"
    return ""


def as_pkb_names(pkb, cheats, out):
    """Each cheat <number>_<what>.py copied into a folder of its own under the reference's
    name with _cuda (what run_local.py --solution cuda loads); [(path, folder)]."""
    refs = {int(os.path.basename(r).split("_")[0]): os.path.basename(r)[:-3]
            for r in glob.glob(os.path.join(pkb, "reference", "[0-9]*_*.py"))}
    found = []
    for path in sorted(glob.glob(os.path.join(cheats, "[0-9]*_*.py"))):
        stem = os.path.basename(path)[:-3]
        folder = os.path.join(out, "cheat-" + stem)
        os.makedirs(folder, exist_ok=True)
        dst = os.path.join(folder, refs[int(stem.split("_")[0])] + "_cuda.py")
        shutil.copyfile(path, dst)
        found.append((dst, folder))
    return found


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
    ap.add_argument("--solutions", default="")
    ap.add_argument("--cheats", default="", help="bench/pkb_tamper: its cheats instead of --solutions")
    ap.add_argument("--out", required=True)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--only", default="", help="problem numbers, comma-separated (default: every solution)")
    ap.add_argument("--kforge-runs", type=int, default=1,
                    help="kforge evals per solution; the last is compared (the first builds any extension)")
    a = ap.parse_args()
    if bool(a.solutions) == bool(a.cheats):
        ap.error("give --solutions DIR or --cheats DIR")
    a.pkb = os.path.abspath(a.pkb)
    os.makedirs(a.out, exist_ok=True)
    if a.cheats:
        todo = as_pkb_names(a.pkb, os.path.abspath(a.cheats), os.path.abspath(a.out))
    else:
        folder = os.path.abspath(a.solutions)
        todo = [(p, folder) for p in glob.glob(os.path.join(folder, "*_cuda.py"))]
    rows = []
    for path, folder in sorted(todo, key=lambda t: int(os.path.basename(t[0]).split("_")[0])):
        number = int(os.path.basename(path).split("_")[0])
        if a.only and str(number) not in a.only.split(","):
            continue
        walls = []
        for _ in range(max(1, a.kforge_runs)):
            k = run_kforge(a, number, path)
            walls.append(round(k["wall_s"], 1))
        k["walls_s"] = walls
        p = run_pkb(a, number, folder)
        agree = k["ok"] == p["ok"]
        ratio = k["speedup"] / p["speedup"] if k["ok"] and p["ok"] and k["speedup"] and p["speedup"] else None
        label = os.path.basename(folder)[len("cheat-"):] if a.cheats else os.path.basename(path)
        rows.append({"solution": label, "kforge": k, "pkb": p, "verdicts_agree": agree,
                     "speedup_ratio": ratio, "kforge_only": "" if agree else kforge_only(k)})
        fmt = lambda s: "-" if s is None else "%.1f%%" % s
        print("%-28s kforge %-9s %6s (spread %6s, %5.1f s) | PKB %-8s %6s (spread %6s, %5.1f s) | %s%s" % (
            label, k["status"], "%.3fx" % k["speedup"] if k.get("speedup") else "-",
            fmt(spread(k["per_trial"])), k["wall_s"], "match" if p["ok"] else "mismatch",
            "%.3fx" % p["speedup"] if p["speedup"] else "-", fmt(spread(p["per_trial"])), p["wall_s"],
            "agree" if agree else "DISAGREE", "" if ratio is None else ", kforge/PKB speedup %.3f" % ratio))
        if len(walls) > 1:
            print("    kforge walls, first builds any extension: %s s" % walls)
        if not agree:
            print("    kforge: %s\n    PKB:    %s" % (k["said"], p["said"]))
            if rows[-1]["kforge_only"]:
                print("    why: " + rows[-1]["kforge_only"])
        if k["timeline"]:
            print("    kforge rank 0 timeline: " + ", ".join("%s %.2fs" % (n, t) for n, t in k["timeline"]))
        sys.stdout.flush()
    json.dump(rows, open(os.path.join(a.out, "parity.json"), "w"), indent=1)
    bad = [r["solution"] for r in rows if not r["verdicts_agree"]]
    explained = [r["solution"] for r in rows if r.get("kforge_only")]
    print("%d solutions, verdicts agree on %d%s%s" % (
        len(rows), len(rows) - len(bad), "; disagree: " + ", ".join(bad) if bad else "",
        " (%d by a rule of kforge's own: %s)" % (len(explained), ", ".join(explained)) if explained else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
