#!/usr/bin/env bash
# bench/check_cost.sh BUILD [OLD_BUILD]: where the judge's seconds go in one eval, part by
# part, from the verdict's own seconds (sandbox/rank/steps.h PartClock): the full size's
# check and timing steps split into the candidate's calls, the baseline's, the inputs, the
# outputs read back and compared, the inputs proven unchanged, verify, audit. REPS `kforge
# eval`s (default 5) of PROBLEM's shipped kernel (default all_reduce) at world 1 on this
# machine's backend; with OLD_BUILD, old and new alternate eval by eval, so drift hits
# both alike. Prints the median of each part, seconds.
#   bench/check_cost.sh build                 # this machine, one build
#   bench/check_cost.sh build /tmp/old/build  # before and after
set -u
cd "$(dirname "$0")/.."
new="$(cd "${1:?usage: bench/check_cost.sh BUILD [OLD_BUILD]}" && pwd)"
old="${2:+$(cd "$2" && pwd)}"
reps="${REPS:-5}" problem="${PROBLEM:-all_reduce}"
out="$(mktemp -d)"
builds=("$new")
[ -n "$old" ] && builds=("$old" "$new")
echo "== bench/check_cost.sh ($(git log --oneline -1 2>/dev/null | cut -c1-50)), $(date -u +%FT%TZ)"
echo "   $problem, world 1, $reps evals a build, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for i in $(seq 1 "$reps"); do
  for b in "${builds[@]}"; do
    tag=new; [ "$b" = "$old" ] && tag=old
    "$b/kforge" eval "$problem" --world 1 --json ${ARGS:-} >"$out/$tag-$i.json" 2>/dev/null
  done
done
python3 - "$out" "${#builds[@]}" <<'PY'
import glob, json, os, sys
out, nbuilds = sys.argv[1], int(sys.argv[2])
tags = ["old", "new"] if nbuilds == 2 else ["new"]
parts, status = {}, {}
for tag in tags:
    for f in sorted(glob.glob(os.path.join(out, tag + "-*.json"))):
        try:
            v = json.load(open(f))
        except Exception:
            continue
        status.setdefault(tag, []).append(v.get("status", "?"))
        for k, s in v.get("seconds", []):
            if k.startswith("full/check") or k.startswith("full/time") or k == "total":
                parts.setdefault(k, {}).setdefault(tag, []).append(s)
med = lambda v: sorted(v)[(len(v) - 1) // 2] if v else float("nan")
print(f"{'part':<32}" + "".join(f"{t + ' s':>10}" for t in tags))
for k, by in parts.items():
    print(f"{k:<32}" + "".join(f"{med(by.get(t, [])):>10.4f}" for t in tags))
for t in tags:
    print(f"{t}: statuses {' '.join(sorted(set(status.get(t, []))))} ({len(status.get(t, []))} evals)")
PY
