"""Where a PKB driver's time went, from a rank's report (sandbox/pkb/pkb_eval.py writes its
"timeline": [phase, seconds since the driver started] at each phase): seconds per phase, a
trial's phases summed over the trials. Used by bench/pkb_gpu.sh."""


def driver_seconds(rank_report, digits=1):
    """'driver s: import torch 3.6, ... (of 15.6)', or '' where the report has no timeline."""
    marks, spent = rank_report.get("timeline", []), {}
    for (name, at), (_, nxt) in zip(marks, marks[1:]):
        kind = name.split(" trial ")[0]
        spent[kind] = spent.get(kind, 0) + nxt - at
    if not marks:
        return ""
    return ("driver s: " + ", ".join(f"{k} {t:.{digits}f}" for k, t in spent.items()) +
            f" (of {marks[-1][1]:.{digits}f})")
