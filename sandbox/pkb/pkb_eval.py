#!/usr/bin/env python3
"""kforge's evaluator for one ParallelKernelBench (PKB) candidate: one job runs the
reference and the candidate, every trial, on the inputs PKB makes (the checkout's own
utils.input_output_tensors.create_input_tensor, fresh per trial), compares every rank's
outputs as PKB does (a cast to float32, atol/rtol 1e-2 by default; kforge also requires
equal dtypes, and that an input the reference leaves as it is the candidate leaves too:
pkb_compare.py), and times them as PKB does (500 warmup calls, or --warmup-s seconds of
them where those are slow; then calls back to back through input groups that defeat the
L2, CUDA events, the mean per call; PKB's 100 calls, or as many as fill --min-ms where
those are shorter), alternated in --rounds rounds so that both see the same machine, every
call on whole tuples of each side's own refilled each block, blocks of drawn lengths, each
block's last output checked (pkb_fresh.py; --timed-check last: PKB's clones, and only the
last call on fresh inputs of its own). A trial's times are the medians of its rounds' means on the
slowest rank, its speedup the median of its rounds' speedups (pkb_timing.py). Process
groups that the calls make and drop are destroyed between blocks (DroppedGroups). A
candidate that replaces what the reference, the check or the timer call is rejected
(pkb_tamper.py). A setup that cannot run the job (no torch, no CUDA, fewer GPUs than
ranks) is reported as "environment"; kforge then asks --probe, which loads no candidate,
before it believes that. An exception in the reference's code or in making the inputs is
reported as "reference"; kforge believes that once a job with the reference as its own
candidate fails so too (a problem that needs more ranks or memory). Each rank writes
<out>/rank<R>.json (with its timeline: seconds since the job started, at each phase);
<out>/rank<R>.phase says where it is, for the watchdog's report. The C++ side takes the
median over the trials. Written for kforge (src/pkb/evaluate.h), not taken from PKB.

Usage: pkb_eval.py --nproc N --pkb ROOT --problem-id N --reference REF.py --solution SOL.py
  --out DIR [--trials 5 --warmup 500 --warmup-s 10 --iters 100 --min-ms 200 --rounds 20
  --atol 1e-2 --rtol 1e-2 --dtype bfloat16 --m 1024 --n 1024 --ext-cache DIR
  --timed-check clones|last] [--probe]
With --nproc it starts the ranks itself (see launch()); without, it is one rank under
torchrun (RANK and WORLD_SIZE from the environment).
"""
import argparse
import hashlib
import importlib.util
import json
import os
import sys
import traceback

import pkb_compare
import pkb_fresh
import pkb_report
import pkb_tamper
import pkb_timing
from pkb_compare import changed_input, compare, untouched
from pkb_ranks import free_port, rank_environment, wait_ranks
from pkb_report import Report, write_whole
from pkb_setup import last_line, load_setup
from pkb_timing import DroppedGroups, group_count, input_groups, l2_bytes, time_alternated


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--pkb", required=True)
    p.add_argument("--problem-id", type=int, required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--solution", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--atol", type=float, default=1e-2)
    p.add_argument("--rtol", type=float, default=1e-2)
    p.add_argument("--dtype", default="bfloat16")
    p.add_argument("--m", type=int, default=1024)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--ext-cache", default="")
    p.add_argument("--nproc", type=int, default=0, help="start this many ranks (else: a rank under torchrun)")
    p.add_argument("--probe", action="store_true",
                   help="check the setup alone (no candidate), write <out>/probe.json, and exit")
    p.add_argument("--warmup-s", type=float, default=10.0,
                   help="warm each side up for --warmup calls or this many seconds, whichever ends first "
                   "(0: PKB's count alone)")
    p.add_argument("--rounds", type=int, default=20,
                   help="alternated rounds a trial: its speedup is the median of theirs")
    p.add_argument("--min-ms", type=float, default=200.0,
                   help="at least this long per side and trial: more calls than --iters where one is short")
    p.add_argument("--timed-check", choices=("last", "clones"), default="clones",
                   help="clones: every call on whole tuples refilled every block, blocks of drawn lengths "
                   "(pkb_fresh.CheckedClones); last: each block's last call on fresh inputs of its own "
                   "(pkb_fresh.FreshLast), where a solution that tells that call apart passes")
    return p.parse_args(argv)


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "solution", None)):
        raise AttributeError("%s defines no solution()" % path)
    return mod.solution


def agree_failed(torch, dist, dev, failed):
    """True when this rank or any other failed: all stop at the same point, none waits on
    a collective a failed peer never joins."""
    flag = torch.tensor([1 if failed else 0], device=dev, dtype=torch.int32)
    dist.all_reduce(flag)
    return int(flag.item()) != 0


def set_extension_cache(cache, solution_path, rank):
    """Extensions built once per solution source: keyed by its hash, one folder per rank
    (concurrent builds into one folder race)."""
    if not cache:
        return
    with open(solution_path, "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()[:16]
    d = os.path.join(cache, key, "rank%d" % rank)
    os.makedirs(d, exist_ok=True)
    os.environ["TORCH_EXTENSIONS_DIR"] = d


def probe(args):
    """The setup alone, no candidate loaded: kforge runs this (--probe) when a job said its
    setup cannot run it, since a candidate shares the job's process and could say so
    itself. Writes <out>/probe.json: status "ok", or "environment" with the message."""
    os.makedirs(args.out, exist_ok=True)
    _, why = load_setup(args.pkb, max(args.nproc, 1))
    report = {"status": "environment" if why else "ok", "message": why or "", "python": sys.executable}
    write_whole(os.path.join(args.out, "probe.json"), json.dumps(report))
    return 0


def start(args, rep, rank, world):
    """torch, torch.distributed, the checkout's input maker and this rank's GPU, with the
    process group up; None (the report written) where the setup cannot run the job."""
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    set_extension_cache(args.ext_cache, args.solution, rank)
    rep.phase("import torch")
    mods, why = load_setup(args.pkb, int(os.environ.get("LOCAL_WORLD_SIZE", world)))
    if why:
        rep.finish("environment", message=why)
        return None
    torch, dist, create_input_tensor = mods
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    rep.phase("init process group")
    dist.init_process_group("nccl", device_id=dev)
    return torch, dist, create_input_tensor, dev


def stop_if(torch, dist, dev, rep, failure):
    """Every rank stops together when any failed (none waits on a collective a failed peer
    never joins): this one reports `failure` (status, fields), the others that a peer
    failed. True when they stop."""
    if not agree_failed(torch, dist, dev, failure is not None):
        return False
    if failure is not None:
        rep.finish(failure[0], **failure[1])
    else:  # another rank failed: it reports why
        rep.finish("correct", note="stopped in %s: another rank failed" % rep.data["phase"])
    return True


def rejected(changed):
    """The failure of a candidate that changed `changed` (pkb_tamper), or None; kforge's
    finding names them."""
    return ("rejected", {"changed": changed}) if changed else None


def load_both(args, rep, torch, dist, dev):
    """The reference's and the candidate's solution(), and what the candidate may not
    change, recorded before it is loaded; None where the candidate did not load or
    changed it (the report written)."""
    rep.phase("load reference")
    rep.side("ref")
    ref_fn = load_module(args.reference, "pkb_reference")
    own = {"pkb_eval": sys.modules[__name__], "pkb_timing": pkb_timing, "pkb_tamper": pkb_tamper,
           "pkb_compare": pkb_compare, "pkb_fresh": pkb_fresh, "pkb_report": pkb_report}
    watched = pkb_tamper.Watched(torch, pkb_tamper.default_places(torch, dist, own))
    rep.phase("load candidate")
    try:
        cand_fn, failed = load_module(args.solution, "pkb_candidate"), None
    except Exception:
        cand_fn, failed = None, traceback.format_exc(limit=6)
    failure = ("compile_error", {"message": failed}) if failed else rejected(watched.changed())
    if stop_if(torch, dist, dev, rep, failure):
        return None
    return ref_fn, cand_fn, watched


def make_inputs(args, ctx, rank, world, trial):
    """The checkout's argument tuple for `trial` (PKB's seed: its problem, rank and trial)."""
    torch, _, create_input_tensor, dev = ctx
    return create_input_tensor(rank, world, args.problem_id, (args.m, args.n), getattr(torch, args.dtype),
                               trial=trial, device=dev)


def check_trial(args, rep, ctx, fns, trial, rank, world):
    """Trial `trial`'s check on fresh inputs: the outputs, and the inputs the reference
    leaves as they are. Its inputs and the size of its outputs, or None where it failed."""
    torch, dist, _, dev = ctx
    ref_fn, cand_fn, watched = fns
    rep.phase("check trial %d" % trial)
    rep.side("inputs")
    ref_x, cand_x = (make_inputs(args, ctx, rank, world, trial) for _ in range(2))
    rep.side("ref")
    want = ref_fn(*ref_x)
    torch.cuda.synchronize()
    kept = untouched(torch, ref_x, cand_x)
    dist.barrier()
    crashed = None
    rep.side("cand")
    try:
        got = cand_fn(*cand_x)
        torch.cuda.synchronize()
    except Exception:
        crashed = traceback.format_exc(limit=6)
    failure = rejected(watched.changed())  # before compare(), which calls what it may have changed
    if failure is None and crashed is None:
        try:  # outputs of a type no comparison takes are the candidate's crash
            bad = compare(torch, want, got, args.atol, args.rtol) or changed_input(torch, ref_x, cand_x, kept)
            failure = ("mismatch", dict(bad, trial=trial)) if bad else None
        except Exception:
            crashed = traceback.format_exc(limit=6)
    if failure is None and crashed is not None:
        failure = "crash", {"message": crashed, "trial": trial}
    if stop_if(torch, dist, dev, rep, failure):
        return None
    return (ref_x, cand_x), pkb_fresh.nbytes(torch, want)


def timed_check(args, ctx, rank, world, trial, ref_x, out_bytes, groups):
    """pkb_fresh.timed_checker for trial `trial` (--timed-check; `groups`: PKB's count of
    input groups, the clones' count), with fresh inputs from trial numbers no check uses."""
    torch, dist, _, dev = ctx
    unused = args.trials + pkb_fresh.TRIES * trial
    shared = 42 + args.problem_id * 1000 + unused * 1_000_003  # alike on every rank
    return pkb_fresh.timed_checker(
        torch, dist, dev, lambda k: make_inputs(args, ctx, rank, world, unused + k), ref_x, out_bytes,
        lambda want, got: compare(torch, want, got, args.atol, args.rtol, equal_nan=True),
        clones=groups if args.timed_check == "clones" else 0, seed=shared + rank, length_seed=shared)


def timed_failure(watched, fresh, trial):
    """What the trial's timing showed: a change to what the harness calls, or a last call
    whose output differed from the reference's (pkb_fresh.py); None when neither."""
    failure = rejected(watched.changed())
    if failure is None and fresh is not None and fresh.failure is not None:
        bad = fresh.failure
        bad["message"] = ("in the timed calls of trial %d (round %d, the last call of a block, on fresh inputs): "
                          "%s. The check's call gave the right result: each call's result must come from that "
                          "call's inputs, not from an earlier call" % (trial, bad["round"], bad["message"]))
        failure = "mismatch", dict(bad, trial=trial)
    return failure


def short_warmup(made, asked, seconds):
    """Why a trial's warmup made fewer calls than asked (pkb_timing.warm_up), for the person
    comparing with PKB's 500; "" when it made them all."""
    if min(made) >= asked:
        return ""
    return "reference %d, candidate %d of %d calls, --warmup-s %g reached" % (made[0], made[1], asked, seconds)


# Set by kforge's warm interpreter (pkb_serve.py) to a function that confines the calling
# process (Landlock), or raises OSError. A rank calls it once CUDA and NCCL are up and before
# it loads the reference or the candidate: CUDA's start names its threads through
# /proc/<pid>/task/<tid>/comm, which a confined process may not write (cuInit then fails
# with error 304: an H100 with driver 580, bench/RESULTS.md 2026-12-07 session 5). The
# launcher (launch()) runs none of the eval's code and stays as it is: the confined ranks
# cannot reach it (Landlock keeps a domain from ptrace-ing what is outside it). None in a
# cold job: its jail is bwrap's.
CONFINE = None


def confined(torch, dist, dev, rep):
    """Applies CONFINE where it is set; False where this rank (or a peer) could not be
    confined: no candidate code runs unconfined where kforge asked for confinement."""
    if CONFINE is None:
        return True
    rep.phase("confine")
    failure = None
    try:
        CONFINE()
    except OSError as e:
        failure = ("environment", {"message": "kforge's warm interpreter cannot confine this rank: %s" % e})
    return not stop_if(torch, dist, dev, rep, failure)


def run(args, rep, rank, world):
    ctx = start(args, rep, rank, world)
    if ctx is None:
        return False
    torch, dist, _, dev = ctx
    if not confined(torch, dist, dev, rep):
        return False
    dropped = DroppedGroups(dist, torch.cuda.synchronize)
    dropped.watch()  # from here: a reference may make groups at import
    fns = load_both(args, rep, torch, dist, dev)
    if fns is None:
        return False
    ref_fn, cand_fn, watched = fns
    for trial in range(args.trials):
        checked = check_trial(args, rep, ctx, fns, trial, rank, world)
        if checked is None:
            return False
        (ref_x, cand_x), out_bytes = checked
        dropped.free()  # the checked outputs are gone: their memory is the timed calls' now
        if args.iters <= 0:
            continue
        rep.phase("fresh inputs trial %d" % trial)  # a phase of its own: its cost shows in the timeline
        rep.side("inputs")
        l2 = l2_bytes(torch, dev)
        fresh, unchecked, no_clones = timed_check(args, ctx, rank, world, trial, ref_x, out_bytes,
                                                  group_count(torch, ref_x, l2))
        rep.phase("time trial %d" % trial)
        rep.side("inputs")  # the input groups; time_alternated names each side as it runs
        # The full warmup once (PKB's, for steady clocks); a few calls on later trials' inputs.
        warm = args.warmup if trial == 0 else min(args.warmup, 10)
        clones = isinstance(fresh, pkb_fresh.CheckedClones)  # its own tuples replace the groups
        timing = time_alternated(
            torch, dist, dev, (ref_fn, None if clones else input_groups(torch, ref_x, l2)),
            (cand_fn, None if clones else input_groups(torch, cand_x, l2)),
            warm, args.iters, args.min_ms, rounds=args.rounds, dropped=dropped, fresh=fresh,
            warmup_s=args.warmup_s, on_side=rep.side)
        if stop_if(torch, dist, dev, rep, timed_failure(watched, fresh, trial)):
            return False
        fresh = None  # its tuples' memory is the next trial's
        rep.data["trials"].append({"trial": trial, "ref_ms": timing.ref_ms, "cand_ms": timing.cand_ms,
                                   "speedup": timing.speedup, "calls": timing.calls,
                                   "round_speedups": [round(r, 4) for r in timing.ratios],
                                   "unchecked": unchecked, "no_clones": no_clones,
                                   "short_warmup": short_warmup(timing.warmup, warm, args.warmup_s)})
    rep.finish("correct")
    dist.barrier()
    dist.destroy_process_group()
    return True


def rank_main(args, rank, world):
    os.makedirs(args.out, exist_ok=True)
    rep = Report(args.out, rank, world)
    try:
        run(args, rep, rank, world)
    except Exception:
        rep.failed(traceback.format_exc(limit=6))
        sys.stderr.write(traceback.format_exc())
        return 1
    return 0


def launch(args):
    """torchrun's part, without its own start (it imports torch before it starts a rank:
    about 5 s of a job): torch imported once here, then one forked process a rank with
    torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). A rank
    that dies leaves its peers waiting in a collective: they get pkb_ranks.GRACE_S to finish,
    then are killed, as torchrun does. The exit code is the first failed rank's."""
    os.makedirs(args.out, exist_ok=True)
    reports = [Report(args.out, r, args.nproc) for r in range(args.nproc)]
    for rep in reports:
        rep.phase("import torch")
    try:
        import torch  # noqa: F401 -- shared by the forked ranks; CUDA is not initialized yet
    except Exception:
        for rep in reports:
            rep.finish("environment", message="import torch: " + last_line())
        sys.stderr.write(traceback.format_exc())
        return 1
    port = free_port()
    pids = {}
    for rank in range(args.nproc):
        pid = os.fork()
        if pid == 0:
            os.environ.update(rank_environment(rank, args.nproc, port))
            code = 1
            try:
                code = rank_main(args, rank, args.nproc)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        pids[pid] = rank
    return wait_ranks(pids)


def main(argv=None):
    args = parse_args(argv)
    if args.probe:
        return probe(args)
    if args.nproc > 0:
        return launch(args)
    return rank_main(args, int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1")))


if __name__ == "__main__":
    sys.exit(main())
