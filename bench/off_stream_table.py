# bench/off_stream_table.py DIR: one line per timed verdict JSON in DIR (as gpu_check.sh and
# gpu_faults.sh write them): status, candidate and baseline medians, how many samples ran
# past comm.stream()'s end (timed to device idle), the slack the timer allows, flags.
import json, glob, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try: v = json.load(open(p))
    except Exception: continue
    t = v.get("candidate_time", {}); b = v.get("baseline_time", {})
    if not v.get("timed"): continue
    print(f'{os.path.basename(p)[:-5]:<36} {v.get("status"):<9} cand {t.get("median_ms",0):.4f} off {t.get("off_stream",0)}/{t.get("n",0)}  base {b.get("median_ms",0):.4f} off {b.get("off_stream",0)}/{b.get("n",0)} slack_us {v.get("off_stream_slack_ms",0)*1000:.1f} {",".join(v.get("flags",[]))}')
