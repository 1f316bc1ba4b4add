#!/usr/bin/env python3
"""kforge's evaluator for one ParallelKernelBench (PKB) candidate: one job runs the
reference and the candidate, every trial, on the inputs PKB makes (the checkout's own
utils.input_output_tensors.create_input_tensor, fresh per trial), compares every rank's
outputs as PKB does (a cast to float32, atol/rtol 1e-2 by default; kforge also requires
equal dtypes), and times them as PKB does (500 warmup calls, then calls back to back
through input groups that defeat the L2, CUDA events, the mean per call; PKB's 100 calls,
or as many as fill --min-ms where those are shorter), alternated in rounds so that both
see the same machine. A trial's times are the medians of its rounds' means on the
slowest rank, its speedup the median of its rounds' speedups. Process groups that the
calls make and drop are destroyed between blocks (DroppedGroups). Each rank writes
<out>/rank<R>.json (with its timeline: seconds since the job started, at each phase);
<out>/rank<R>.phase says where it is, for the watchdog's report. The C++ side takes the
median over the trials. Written for kforge (src/pkb/evaluate.h), not taken from PKB.

Usage: pkb_eval.py --nproc N --pkb ROOT --problem-id N --reference REF.py --solution SOL.py
  --out DIR [--trials 5 --warmup 500 --iters 100 --min-ms 200 --atol 1e-2 --rtol 1e-2
  --dtype bfloat16 --m 1024 --n 1024 --ext-cache DIR]
With --nproc it starts the ranks itself (see launch()); without, it is one rank under
torchrun (RANK and WORLD_SIZE from the environment).
"""
import argparse
import gc
import hashlib
import importlib.util
import json
import os
import signal
import socket
import statistics
import sys
import time
import traceback

STARTED = time.time()  # before torch is imported: the timeline's zero


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
    p.add_argument("--min-ms", type=float, default=200.0,
                   help="at least this long per side and trial: more calls than --iters where one is short")
    return p.parse_args(argv)


class Report:
    """One rank's result file, rewritten whole (never half-written) at each change."""

    def __init__(self, out, rank, world):
        self.out, self.rank = out, rank
        self.data = {"rank": rank, "world": world, "status": "crash", "phase": "start", "trials": []}

    def phase(self, name):
        self.data["phase"] = name
        self.data.setdefault("timeline", []).append([name, round(time.time() - STARTED, 3)])
        self._write(os.path.join(self.out, "rank%d.phase" % self.rank), name)

    def finish(self, status, **fields):
        self.data["status"] = status
        self.data.setdefault("timeline", []).append(["finish", round(time.time() - STARTED, 3)])
        self.data.update(fields)
        self._write(os.path.join(self.out, "rank%d.json" % self.rank), json.dumps(self.data, indent=1))

    @staticmethod
    def _write(path, text):
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)


def named_outputs(y, name=None):
    """(name, value) leaves as PKB's save_tensor names them: the tensor itself ("output"),
    output_<i> for a tuple or list, the keys of a dict; nested containers (a list of
    tensors inside a tuple, say) go on down as output_<i>_<j>."""
    if isinstance(y, (tuple, list)):
        out = []
        for i, v in enumerate(y):
            out += named_outputs(v, "%s_%d" % (name or "output", i))
        return out
    if isinstance(y, dict):
        out = []
        for k in sorted(y, key=str):
            out += named_outputs(y[k], str(k) if name is None else "%s_%s" % (name, k))
        return out
    return [(name or "output", y)]


def same_scalar(a, b, atol, rtol):
    """A non-tensor leaf: numbers within the tolerances, anything else equal."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= atol + rtol * abs(a)
    return type(a) is type(b) and a == b


def compare(torch, ref, got, atol, rtol):
    """None when got matches ref, else a dict naming the first tensor that differs."""
    r, g = named_outputs(ref), named_outputs(got)
    if [n for n, _ in r] != [n for n, _ in g]:
        return {"tensor": ",".join(n for n, _ in g) or "(none)",
                "message": "outputs %s, want %s" % ([n for n, _ in g], [n for n, _ in r])}
    for (name, a), (_, b) in zip(r, g):
        if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
            if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor) or not same_scalar(a, b, atol, rtol):
                return {"tensor": name, "message": "%s: %r, want %r" % (name, b, a)}
            continue
        if tuple(a.shape) != tuple(b.shape):
            return {"tensor": name, "message": "%s: shape %s, want %s" % (name, tuple(b.shape), tuple(a.shape))}
        if a.dtype != b.dtype:
            return {"tensor": name, "message": "%s: dtype %s, want %s" % (name, b.dtype, a.dtype)}
        af, bf = a.detach().float(), b.detach().float()
        if not torch.allclose(af, bf, atol=atol, rtol=rtol):
            diff = (af - bf).abs()
            bad = ~torch.isclose(af, bf, atol=atol, rtol=rtol)
            return {"tensor": name, "max_abs": float(diff.max().item()), "bad": int(bad.sum().item()),
                    "total": int(a.numel()),
                    "message": "%s: %d of %d elements differ, max abs error %.6g (atol %g, rtol %g)"
                    % (name, int(bad.sum().item()), a.numel(), float(diff.max().item()), atol, rtol)}
    return None


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "solution", None)):
        raise AttributeError("%s defines no solution()" % path)
    return mod.solution


def input_groups(torch, x, l2_bytes):
    """PKB's cold-cache convention (its utils/performance.py, here in kforge's words): the
    first tensor argument is cloned into groups that the timed calls cycle through, as many
    as it takes to cover three times the L2 (at most 128), one when it is that large
    itself. Returns the argument tuples, one per group. One group is the arguments
    themselves, not a clone as in PKB: kforge holds the reference's inputs and the
    candidate's in one job, and a clone of each would double that (problem 68's first
    tensor is 53 GiB on the H200)."""
    idx = next((i for i, a in enumerate(x) if isinstance(a, torch.Tensor)), None)
    if idx is None:
        return [tuple(x)]
    nbytes = x[idx].element_size() * x[idx].numel()
    groups = 1 if nbytes <= 0 or nbytes >= 3 * l2_bytes else min(max(2, 3 * l2_bytes // nbytes + 1), 128)
    if groups == 1:
        return [tuple(x)]
    out = []
    for _ in range(groups):
        args = list(x)
        args[idx] = x[idx].clone()
        out.append(tuple(args))
    return out


def l2_bytes(torch, dev):
    try:
        return int(torch.cuda.get_device_properties(dev).l2_cache_size) or 50 << 20
    except Exception:
        return 50 << 20


class DroppedGroups:
    """The process groups that the timed calls make and then drop, destroyed between calls
    and blocks (never inside a timed block). PKB's 48_fsdp_and_tp makes two new groups on
    every call and frees none; PKB times each side in a job of its own, while kforge's one
    job makes both sides' calls, and their NCCL communicators filled the H200 ("Failed to
    CUDA calloc async"). A group that anything outside torch.distributed still refers to
    (a function's cache, as 51_moe_ep_narrow keeps) is left alone: only what no one can
    use again is destroyed, once the device is idle (sync: torch.cuda.synchronize). Only
    calls through torch.distributed.new_group are seen: torch's own DeviceMesh binds c10d's
    new_group and keeps its groups by name, so its groups are never touched. Without
    watch(), free() does nothing."""

    def __init__(self, dist, sync):
        self.dist, self.sync, self.made = dist, sync, []

    def watch(self):
        real = self.dist.new_group
        not_member = getattr(getattr(self.dist, "GroupMember", None), "NON_GROUP_MEMBER", None)

        def new_group(*args, **kwargs):
            entry = [real(*args, **kwargs), 0]
            if entry[0] is not None and entry[0] is not not_member:
                entry[1] = self.references(entry)  # torch.distributed's own, and entry's
                self.made.append(entry)
            return entry[0]

        self.dist.new_group = new_group

    @staticmethod
    def references(entry):
        """Counted the same way when the group is made and when it may be freed, so that
        only references added since (a caller that kept it) make a difference."""
        return sys.getrefcount(entry[0])

    def free(self):
        kept, idle = [], False
        for entry in self.made:
            if self.references(entry) > entry[1]:
                kept.append(entry)
                continue
            if not idle:  # no communicator is shut down under work still queued on it
                self.sync()
                idle = True
            self.dist.destroy_process_group(entry[0])
        self.made = kept


def timed_block(torch, dist, fn, groups, n, start):
    """ms for n calls back to back, inputs cycling through the groups from index start;
    the ranks start it together."""
    dist.barrier()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for i in range(n):
        fn(*groups[(start + i) % len(groups)])
    end.record()
    end.synchronize()
    return begin.elapsed_time(end)


def calls_per_trial(torch, dist, dev, fns, iters, min_ms):
    """PKB's `iters` calls, or more where that many take under min_ms (a 40 us operation's
    100 calls are 4 ms, where the clocks' and the launches' jitter is several percent);
    the same count on every rank, since each call may be a collective."""
    per_call = max(timed_block(torch, dist, fn, groups, 5, 0) / 5 for fn, groups in fns)
    n = iters if per_call <= 0 else max(iters, min(int(min_ms / per_call) + 1, 20000))
    count = torch.tensor([n], device=dev, dtype=torch.int64)
    dist.all_reduce(count, op=dist.ReduceOp.MAX)
    return int(count.item())


def time_alternated(torch, dist, dev, ref, cand, warmup, iters, min_ms, rounds=20, dropped=None):
    """The reference and the candidate, each given as (fn, input groups), timed as PKB
    times one (calls back to back, inputs cycling through the groups, CUDA events around
    them, the mean per call) but in `rounds` alternated blocks, which of the two goes
    first swapped every round, so that both see the same clocks and neighbours. Returns
    the slowest rank's ms per call of each (the median over the rounds), each round's
    speedup (of the slowest rank's blocks), their median, and the calls made of each.
    `dropped` (a DroppedGroups) frees the groups the calls dropped, after each call of the
    warmup and after each block."""
    free = dropped.free if dropped is not None else (lambda: None)
    for fn, groups in (ref, cand):
        for i in range(warmup):
            fn(*groups[i % len(groups)])
            free()
    torch.cuda.synchronize()
    iters = calls_per_trial(torch, dist, dev, (ref, cand), iters, min_ms)
    free()
    rounds = max(1, min(rounds, iters))
    per_call, done = {"ref": [], "cand": []}, {"ref": 0, "cand": 0}
    # Python's collector pausing in the middle of a block of 40 us launches is one of the
    # outliers a mean per block carries; it runs once the rounds are done instead.
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            n = iters // rounds + (1 if r < iters % rounds else 0)
            order = (("ref", ref), ("cand", cand)) if r % 2 == 0 else (("cand", cand), ("ref", ref))
            for key, (fn, groups) in order:
                per_call[key].append(timed_block(torch, dist, fn, groups, n, done[key]) / n)
                free()
                done[key] += n
    finally:
        if gc_was_on:
            gc.enable()
    gc.collect()
    # Every rank the slowest rank's rounds (once, after the timing: a collective between
    # blocks would be timed with them).
    slowest = torch.tensor([per_call["ref"], per_call["cand"]], device=dev, dtype=torch.float64)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    ref_ms, cand_ms = slowest.tolist()
    # Medians: one round disturbed by the host (a launch queue that stalls, a page fault)
    # moves a mean of all calls, not these. The speedup is the median of the rounds' own,
    # each of a reference block and the candidate block beside it: a shift of the clocks
    # between rounds (a 40 us call's time doubled from one trial to the next on the H200)
    # cancels in each.
    ratios = [r / c for r, c in zip(ref_ms, cand_ms) if c > 0]
    speedup = statistics.median(ratios) if ratios else 0.0
    return statistics.median(ref_ms), statistics.median(cand_ms), ratios, speedup, iters


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


def run(args, rep, rank, world):
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    set_extension_cache(args.ext_cache, args.solution, rank)
    rep.phase("import torch")
    import torch
    import torch.distributed as dist
    sys.path.insert(0, args.pkb)
    from utils.input_output_tensors import create_input_tensor

    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    rep.phase("init process group")
    dist.init_process_group("nccl", device_id=dev)
    dropped = DroppedGroups(dist, torch.cuda.synchronize)
    dropped.watch()  # from here: a reference may make groups at import
    rep.phase("load reference")
    ref_fn = load_module(args.reference, "pkb_reference")
    rep.phase("load candidate")
    try:
        cand_fn, failed = load_module(args.solution, "pkb_candidate"), None
    except Exception:
        cand_fn, failed = None, traceback.format_exc(limit=6)
    if agree_failed(torch, dist, dev, failed is not None):  # every rank stops together
        if failed is not None:
            rep.finish("compile_error", message=failed)
        else:
            rep.finish("correct", note="stopped: another rank could not load the candidate")
        return False
    dtype = getattr(torch, args.dtype)
    ok = True
    for trial in range(args.trials):
        rep.phase("check trial %d" % trial)
        ref_x = create_input_tensor(rank, world, args.problem_id, (args.m, args.n), dtype, trial=trial, device=dev)
        cand_x = create_input_tensor(rank, world, args.problem_id, (args.m, args.n), dtype, trial=trial, device=dev)
        want = ref_fn(*ref_x)
        torch.cuda.synchronize()
        dist.barrier()
        crashed = bad = None
        try:
            got = cand_fn(*cand_x)
            torch.cuda.synchronize()
            bad = compare(torch, want, got, args.atol, args.rtol)
        except Exception:
            crashed = traceback.format_exc(limit=6)
        if agree_failed(torch, dist, dev, crashed is not None or bad is not None):
            if crashed is not None:
                rep.finish("crash", message=crashed, trial=trial)
            elif bad is not None:
                rep.finish("mismatch", trial=trial, **bad)
            else:  # another rank failed: it reports why
                rep.finish("correct", note="stopped at trial %d: another rank failed" % trial)
            return False
        want = got = None  # the outputs checked: their memory is the timed calls' now
        dropped.free()
        if args.iters <= 0:
            continue
        rep.phase("time trial %d" % trial)
        l2 = l2_bytes(torch, dev)
        # The full warmup once (PKB's, for steady clocks); a few calls on later trials' inputs.
        warm = args.warmup if trial == 0 else min(args.warmup, 10)
        ref_ms, cand_ms, ratios, speedup, calls = time_alternated(
            torch, dist, dev, (ref_fn, input_groups(torch, ref_x, l2)), (cand_fn, input_groups(torch, cand_x, l2)),
            warm, args.iters, args.min_ms, dropped=dropped)
        rep.data["trials"].append({"trial": trial, "ref_ms": ref_ms, "cand_ms": cand_ms, "speedup": speedup,
                                   "calls": calls, "round_speedups": [round(r, 4) for r in ratios]})
    rep.finish("correct")
    dist.barrier()
    dist.destroy_process_group()
    return ok


def rank_main(args, rank, world):
    os.makedirs(args.out, exist_ok=True)
    rep = Report(args.out, rank, world)
    try:
        run(args, rep, rank, world)
    except Exception:
        rep.finish("crash", message="in %s: %s" % (rep.data["phase"], traceback.format_exc(limit=6)))
        sys.stderr.write(traceback.format_exc())
        return 1
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args):
    """torchrun's part, without its own start (it imports torch before it starts a rank:
    about 5 s of a job): torch imported once here, then one forked process a rank with
    torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). A rank
    that dies leaves its peers waiting in a collective: they get GRACE_S to finish, then
    are killed, as torchrun does. The exit code is the first failed rank's."""
    os.makedirs(args.out, exist_ok=True)
    reports = [Report(args.out, r, args.nproc) for r in range(args.nproc)]
    for rep in reports:
        rep.phase("import torch")
    try:
        import torch  # noqa: F401 -- shared by the forked ranks; CUDA is not initialized yet
    except Exception:
        for rep in reports:
            rep.finish("crash", message="in import torch: " + traceback.format_exc(limit=3))
        sys.stderr.write(traceback.format_exc())
        return 1
    port = str(free_port())
    pids = {}
    for rank in range(args.nproc):
        pid = os.fork()
        if pid == 0:
            os.environ.update({"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(args.nproc),
                               "LOCAL_WORLD_SIZE": str(args.nproc), "MASTER_ADDR": "127.0.0.1",
                               "MASTER_PORT": port})
            code = 1
            try:
                code = rank_main(args, rank, args.nproc)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        pids[pid] = rank
    first_bad, deadline = 0, None
    while pids:
        if deadline is not None and time.time() > deadline:
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
        pid, status = os.waitpid(-1, os.WNOHANG if deadline is not None else 0)
        if pid == 0:
            time.sleep(0.05)
            continue
        pids.pop(pid, None)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.stderr.write("rank %s ended with %s\n" % (pid, "signal %d" % -code if code < 0 else "exit %d" % code))
            if not first_bad:
                first_bad = code if code > 0 else 128 - code
                deadline = time.time() + GRACE_S
    return first_bad


GRACE_S = 10.0


def main(argv=None):
    args = parse_args(argv)
    if args.nproc > 0:
        return launch(args)
    return rank_main(args, int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1")))


if __name__ == "__main__":
    sys.exit(main())
