"""The timing of kforge's PKB driver (pkb_eval.py): PKB's method (warmup, calls back to
back through input groups that defeat the L2, CUDA events, the mean per call), the
reference and the candidate alternated in rounds, and the process groups the calls make
and drop destroyed between blocks. torch and torch.distributed come in as arguments, so
that pkb_eval_test.py can time a stand-in. Written for kforge, not taken from PKB."""
import collections
import gc
import statistics
import sys
import time

# What time_alternated finds: the slowest rank's ms per call of each side (the median over
# the rounds), each round's speedup (of the slowest rank's blocks), their median, the
# timed calls made of each side, and the warmup calls made of each.
Timing = collections.namedtuple("Timing", "ref_ms cand_ms ratios speedup calls warmup")

WARMUP_CHECK = 10  # warmup calls between two looks at the clock


def input_groups(torch, x, l2_bytes):
    """PKB's cold-cache convention (its utils/performance.py, here in kforge's words): the
    first tensor argument is cloned into groups that the timed calls cycle through, as many
    as it takes to cover three times the L2 (at most 128), one when it is that large
    itself. Returns the argument tuples, one per group. One group is the arguments
    themselves, not a clone as in PKB: kforge holds the reference's inputs and the
    candidate's in one job, and a clone of each would double that (problem 68's first
    tensor is 53 GiB on the H200)."""
    idx, groups = first_tensor(torch, x), group_count(torch, x, l2_bytes)
    if groups == 1:
        return [tuple(x)]
    out = []
    for _ in range(groups):
        args = list(x)
        args[idx] = x[idx].clone()
        out.append(tuple(args))
    return out


def first_tensor(torch, x):
    """The index of x's first tensor argument, or None."""
    return next((i for i, a in enumerate(x) if isinstance(a, torch.Tensor)), None)


def group_count(torch, x, l2_bytes):
    """How many input groups input_groups makes of x (one where x has no tensor)."""
    idx = first_tensor(torch, x)
    if idx is None:
        return 1
    nbytes = x[idx].element_size() * x[idx].numel()
    return 1 if nbytes <= 0 or nbytes >= 3 * l2_bytes else min(max(2, 3 * l2_bytes // nbytes + 1), 128)


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


def timed_block(torch, dist, fn, groups, n, start, last=None):
    """ms for n calls back to back, inputs cycling through the groups from index start,
    and the last call's output; with `last`, the last call runs on those arguments (a
    FreshLast's). The ranks start it together. The block ends when the device is idle, not
    when the current stream is: work a call left running on a stream of its own is its
    work (PKB's events on the current stream alone would time only its launch)."""
    dist.barrier()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for i in range(n - 1):
        fn(*groups[(start + i) % len(groups)])
    out = fn(*(last if last is not None else groups[(start + n - 1) % len(groups)]))
    torch.cuda.synchronize()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end), out


def calls_per_trial(torch, dist, dev, sides, iters, min_ms, on_side):
    """PKB's `iters` calls, or more where that many take under min_ms (a 40 us operation's
    100 calls are 4 ms, where the clocks' and the launches' jitter is several percent);
    the same count on every rank, since each call may be a collective. `sides`: (key, (fn,
    groups)) pairs."""
    per_call = 0.0
    for key, (fn, groups) in sides:
        on_side(key)
        per_call = max(per_call, timed_block(torch, dist, fn, groups, 5, 0)[0] / 5)
    n = iters if per_call <= 0 else max(iters, min(int(min_ms / per_call) + 1, 20000))
    count = torch.tensor([n], device=dev, dtype=torch.int64)
    dist.all_reduce(count, op=dist.ReduceOp.MAX)
    return int(count.item())


def any_rank(torch, dist, dev, flag):
    """True when this rank or any other says so (every rank decides alike)."""
    t = torch.tensor([1 if flag else 0], device=dev, dtype=torch.int32)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return int(t.item()) != 0


def warm_up(torch, dist, dev, fn, groups, calls, seconds, free, clock=time.monotonic):
    """PKB's `calls` warmup calls, or fewer once `seconds` have passed (0: no limit). PKB
    warms up for a count whatever a call costs: 500 calls of 48_fsdp_and_tp's are minutes
    a side, most of an eval, where 10 s is what PKB gives any 20 ms call. Every
    WARMUP_CHECK calls the device is let finish and the clock read (a host that only
    launches is ahead of it); the ranks stop together, when any rank's time is up, since
    each call may be a collective. Returns the calls made."""
    deadline = clock() + seconds
    for i in range(calls):
        fn(*groups[i % len(groups)])
        free()
        if seconds > 0 and (i + 1) % WARMUP_CHECK == 0 and i + 1 < calls:
            torch.cuda.synchronize()
            if any_rank(torch, dist, dev, clock() >= deadline):
                return i + 1
    return calls


def time_alternated(torch, dist, dev, ref, cand, warmup, iters, min_ms, rounds=20, dropped=None, fresh=None,
                    warmup_s=0.0, clock=time.monotonic, on_side=lambda key: None):
    """The reference and the candidate, each given as (fn, input groups), timed as PKB
    times one (calls back to back, inputs cycling through the groups, CUDA events around
    them, the mean per call) but in `rounds` alternated blocks, which of the two goes
    first swapped every round, so that both see the same clocks and neighbours. Each side
    is first warmed up with `warmup` calls, or as many as fit in `warmup_s` (warm_up).
    Returns a Timing.
    `dropped` (a DroppedGroups) frees the groups the calls dropped, after each call of the
    warmup and after each block. `fresh` (a pkb_fresh.FreshLast) gives each block's last
    call its arguments and is given both sides' last outputs after each round; a
    pkb_fresh.CheckedClones instead gives every call its arguments, in place of the input
    groups, and each round's block length. on_side("ref" or "cand") is told whose calls
    come next, before each side's warmup and block (a hang's report names the side)."""
    free = dropped.free if dropped is not None else (lambda: None)
    clones = fresh is not None and hasattr(fresh, "groups")
    if clones:  # the warmup's calls on the same tuples as the blocks', so no address is new
        ref, cand = (ref[0], fresh.groups("ref", -1)), (cand[0], fresh.groups("cand", -1))
    warmed = []
    for key, (fn, groups) in (("ref", ref), ("cand", cand)):
        on_side(key)
        warmed.append(warm_up(torch, dist, dev, fn, groups, warmup, warmup_s, free, clock))
    torch.cuda.synchronize()
    iters = calls_per_trial(torch, dist, dev, (("ref", ref), ("cand", cand)), iters, min_ms, on_side)
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
            if clones:
                n = fresh.length(r, n)
            order = (("ref", ref), ("cand", cand)) if r % 2 == 0 else (("cand", cand), ("ref", ref))
            last = {}
            for key, (fn, groups) in order:
                on_side(key)
                if clones:
                    ms, out = timed_block(torch, dist, fn, fresh.groups(key, r), n, done[key])
                else:
                    ms, out = timed_block(torch, dist, fn, groups, n, done[key],
                                          fresh.args(key, r) if fresh is not None else None)
                if fresh is not None:  # else no output outlives its block
                    last[key] = out
                out = None
                per_call[key].append(ms / n)
                free()
                done[key] += n
            if fresh is not None:
                torch.cuda.synchronize()  # as after the check's call: work on any stream done
                fresh.check(r, last["ref"], last["cand"])
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
    return Timing(statistics.median(ref_ms), statistics.median(cand_ms), ratios, speedup, done["cand"], warmed)
