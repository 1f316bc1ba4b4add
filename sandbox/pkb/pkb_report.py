"""One rank's report for kforge's PKB driver (pkb_eval.py): <out>/rank<R>.json, the
result and the timeline (seconds since the job started, at each phase), and
<out>/rank<R>.phase, where the rank is now, which the watchdog reads when it kills a job
that ran past its limit (src/pkb/evaluate.cpp). Both are rewritten whole at each change,
so a job killed at any moment leaves the last whole one. Written for kforge."""
import json
import os
import sys
import time

STARTED = time.time()  # imported before torch is: the timeline's zero


def write_whole(path, text):
    """Never half-written: a reader sees the old file or the new one."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class Report:
    """One rank's result file, rewritten whole (never half-written) at each change."""

    def __init__(self, out, rank, world):
        self.out, self.rank = out, rank
        self.data = {"rank": rank, "world": world, "status": "crash", "phase": "start", "trials": [],
                     "python": sys.executable}

    def phase(self, name):
        self.data["phase"] = name
        self.data.pop("side", None)  # a string where there is one: kforge reads it as one
        self.data.setdefault("timeline", []).append([name, round(time.time() - STARTED, 3)])
        write_whole(os.path.join(self.out, "rank%d.phase" % self.rank), name)

    def side(self, key):
        """Whose code runs now within the phase ("ref", "cand", or "inputs": the checkout's
        input maker and the driver's copies of its tensors), for the watchdog's report of a
        hang and for failed(): the phase file, not the timeline (a timed trial switches 40
        times)."""
        who = {"ref": "the reference's calls", "cand": "the candidate's calls", "inputs": "making the inputs"}[key]
        self.data["side"] = key
        write_whole(os.path.join(self.out, "rank%d.phase" % self.rank), "%s (%s)" % (self.data["phase"], who))

    def failed(self, message):
        """An exception nothing caught: status "reference" where the reference's code or the
        inputs' raised it (kforge then runs the reference alone to see whether it fails
        without the candidate: src/pkb/evaluate.cpp), else "crash"."""
        status = "reference" if self.data.get("side") in ("ref", "inputs") else "crash"
        self.finish(status, message="in %s: %s" % (self.data["phase"], message))

    def finish(self, status, **fields):
        self.data["status"] = status
        self.data.setdefault("timeline", []).append(["finish", round(time.time() - STARTED, 3)])
        self.data.update(fields)
        write_whole(os.path.join(self.out, "rank%d.json" % self.rank), json.dumps(self.data, indent=1))
