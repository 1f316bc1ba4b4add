"""Fresh inputs for the last call of every timed block, and that call's output checked
against the reference's (kforge's addition to PKB's timing: PKB times clones of the
checked inputs and checks no timed output).

A solution that computes once and then hands back what it computed passes a check made
on one call and is timed at next to nothing: one that keys a cache on the input's
address, shape or object, or that returns its previous output when called again within a
moment. So each side has its own copy of a whole argument tuple, refilled before each
block from one of two fresh tuples of the checkout's create_input_tensor (trial numbers
no check uses), the other one each round; the block's last call runs on it, and after
each round its output is compared with the reference's. The refill keeps the copy's
addresses, so a cache keyed on them hands back the last round's result, and the call
before it ran on the checked inputs, so a replay of an earlier call is the wrong one.
PKB's collectives (problems 1-8) fill their inputs with the rank's number, alike for
every trial: there the fresh tuples get small random integers instead (any sum of them
is exact), or a result worked out once, or written down without communicating, would
still be right. Not caught: a cache keyed on the input's contents, hit within one block
(the block's calls repeat their inputs, as PKB's do), and a solution that tells the
checked call apart (the copy is the only tuple outside the cycling groups, and the only
whole one) and computes only for it; CheckedClones (the driver's --timed-check clones,
its default) catches the second. torch comes in as an argument (pkb_compare_test.py gives a
stand-in, which pkb_fresh_test.py uses). Written for kforge, not taken from PKB."""

import random

from pkb_compare import tensor_leaves, unequal

GIB = 1 << 30


def leaves(torch, x):
    """x's tensors, in the order pkb_compare names them (through tuples, lists and dicts,
    a dict's keys sorted)."""
    return [t for _, t in tensor_leaves(torch, x)]


def with_tensors(torch, x, tensors):
    """x rebuilt with its tensors, in leaves() order, taken from the iterator `tensors`;
    anything else (a split size, a process group) shared."""
    if isinstance(x, (tuple, list)):
        items = [with_tensors(torch, v, tensors) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)  # a namedtuple takes fields
    if isinstance(x, dict):
        built = {k: with_tensors(torch, x[k], tensors) for k in sorted(x, key=str)}
        return {k: built[k] for k in x}
    return next(tensors) if isinstance(x, torch.Tensor) else x


def shape_of(torch, x):
    """What two argument tuples must share for one's tensors to be copied into the other's:
    their structure and every tensor's shape and dtype."""
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, tuple(shape_of(torch, v) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((str(k), shape_of(torch, x[k])) for k in sorted(x, key=str)))
    if isinstance(x, torch.Tensor):
        return ("tensor", tuple(x.shape), str(x.dtype))
    return type(x).__name__


def nbytes(torch, x):
    return sum(t.element_size() * t.numel() for t in leaves(torch, x))


class TimedCheck:
    """What both checks of the timed calls keep: the first timed output that differed
    (failure: compare()'s dict with the round)."""

    def __init__(self, compare):
        self.compare, self.failure = compare, None

    def check(self, r, want, got):
        """The reference's and the candidate's last outputs of round r (the device idle)."""
        if self.failure is None:
            bad = self.compare(want, got)
            if bad:
                self.failure = dict(bad, round=r)


class FreshLast(TimedCheck):
    """The two fresh tuples and each side's copy, for pkb_timing.time_alternated."""

    def __init__(self, torch, pool, compare):
        super().__init__(compare)
        self.torch, self.pool = torch, pool
        self.own = {side: [t.clone() for t in leaves(torch, pool[0])] for side in ("ref", "cand")}

    def args(self, side, r):
        """The side's last call's arguments in round r: the round's fresh tuple, with its
        tensors copied in place into the side's own (its plain values, such as a step
        count that changes with the trial, as they are)."""
        src = self.pool[r % 2]
        for dst, t in zip(self.own[side], leaves(self.torch, src)):
            dst.copy_(t)
        return with_tensors(self.torch, src, iter(self.own[side]))


class CheckedClones(TimedCheck):
    """The stronger check (the driver's --timed-check clones), in place of FreshLast and of
    PKB's clones of the first tensor: each side has `count` (at least two) whole argument
    tuples of its own, which the warmup and every block cycle through; before each block
    every one is refilled from one of the checked tuple and the two fresh ones, rotated so
    that none keeps its contents from one block to the next and neighbours differ; and
    each block's last call has its output compared, in blocks whose lengths are drawn from
    `length_seed` (alike on every rank, the same for both sides). So the checked call's
    inputs are like every other call's, and no count of calls says which is last. (The
    last, not one drawn from inside the block: a solution may return a buffer of its own
    that its next call overwrites.) Every tensor is copied, not only the first, so the
    others no longer stay in L2 across calls as in PKB's method. The default: on an H100 it
    moved four hand-written solutions' speedups by 2.2% at most, and every reference that
    fits the card came out correct under it (bench/RESULTS.md, 2026-12-05)."""

    def __init__(self, torch, checked, pool, compare, count, length_seed):
        super().__init__(compare)
        self.torch, self.sources = torch, [checked] + list(pool)
        n = max(count, 2)
        self.own = {side: [[t.clone() for t in leaves(torch, checked)] for _ in range(n)] for side in ("ref", "cand")}
        self.rng, self.lengths = random.Random(length_seed), {}

    def source(self, j, r):
        """Tuple j's source in round r (-1: the warmup): rotated every round; the last
        tuple shifted once more where it would match the first it is followed by."""
        n, k = len(self.own["ref"]), len(self.sources)
        return (j + r + (1 if j == n - 1 and n % k == 1 else 0)) % k

    def groups(self, side, r):
        """The side's argument tuples for round r, refilled in place (each its source's
        plain values, such as a step count, as they are)."""
        out = []
        for j, own in enumerate(self.own[side]):
            src = self.sources[self.source(j, r)]
            for dst, t in zip(own, leaves(self.torch, src)):
                dst.copy_(t)
            out.append(with_tensors(self.torch, src, iter(own)))
        return out

    def length(self, r, calls):
        """How many calls round r's blocks make, where `calls` is their usual count: drawn
        from half to one and a half times it."""
        if r not in self.lengths:
            self.lengths[r] = self.rng.randint((calls + 1) // 2, calls + calls // 2)
        return self.lengths[r]


def vary_fixed(torch, checked, pool, seed):
    """Where the checkout makes every tensor alike for every trial (PKB's collectives),
    the floating-point ones get small random integers (-4 to 4) in both fresh tuples,
    each its own. Where any tensor changes with the trial, a result worked
    out once is already wrong for the fresh tuples, and the others (a table of cosines, a
    mask) are left as the checkout makes them: the reference may rely on what they hold."""
    triples = list(zip(leaves(torch, checked), leaves(torch, pool[0]), leaves(torch, pool[1])))
    if any(unequal(torch, c, a) or unequal(torch, a, b) for c, a, b in triples):
        return
    gen = None
    for _, a, b in triples:
        if not a.dtype.is_floating_point:
            continue
        if gen is None:
            gen = torch.Generator(device=a.device)
            gen.manual_seed(seed)
        for t in (a, b):
            t.copy_(torch.randint(-4, 5, tuple(t.shape), generator=gen, device=t.device, dtype=torch.int8))


def free_bytes(torch, dev):
    """What the device has free, counting what torch's allocator holds unused."""
    free, _ = torch.cuda.mem_get_info(dev)
    return free + torch.cuda.memory_reserved(dev) - torch.cuda.memory_allocated(dev)


def all_agree(torch, dist, dev, ok):
    """True when every rank says ok (each rank must make the same collectives after)."""
    flag = torch.tensor([1 if ok else 0], device=dev, dtype=torch.int32)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return int(flag.item()) == 1


TRIES = 8  # fresh argument tuples made, at most, to find two of the checked one's shapes


def room(torch, dist, dev, need):
    """"" where every rank has `need` bytes free on its device, else why not (every rank
    decides alike)."""
    have = free_bytes(torch, dev)
    if all_agree(torch, dist, dev, have >= need):
        return ""
    return "no room for fresh inputs on some rank (this one needs %.1f GiB, has %.1f GiB free)" % (
        need / GIB, have / GIB)


def fresh_pool(torch, dist, dev, make, checked, seed):
    """The first two of make(0), make(1), ... make(TRIES - 1) (fresh argument tuples) whose
    tensors have the checked one's shapes on every rank (PKB's 81_sam3 draws its counts
    from the trial, 70_torchrec its lengths), vary_fixed() with `seed`; or (None, why not)
    when no two tries fit. Every rank decides alike, since make() may be collective (the
    checkout makes process groups for some problems)."""
    pool, want = [], shape_of(torch, checked)
    for k in range(TRIES):
        x = make(k)
        if all_agree(torch, dist, dev, shape_of(torch, x) == want):
            pool.append(x)
            if len(pool) == 2:
                vary_fixed(torch, checked, pool, seed)
                return pool, ""
    return None, "the inputs' shapes change with the trial: %d of %d fresh trials had the checked one's" % (
        len(pool), TRIES)


def timed_checker(torch, dist, dev, make, checked, out_bytes, compare, clones=0, seed=0, length_seed=0):
    """What checks the timed calls: a FreshLast, or with `clones` (a count of tuples a side)
    a CheckedClones. Returns it or None, why none (no room for the two fresh tuples, a copy
    a side and two outputs of out_bytes; or the shapes change with the trial), and why no
    CheckedClones where one was asked for and a FreshLast checks instead (no room for its
    tuples). `seed` is vary_fixed's (the rank's own), `length_seed` the block lengths'
    (alike on every rank)."""
    tuple_bytes = nbytes(torch, checked)
    why = room(torch, dist, dev, 4 * tuple_bytes + 2 * out_bytes + GIB)
    if why:
        return None, why, ""
    pool, why = fresh_pool(torch, dist, dev, make, checked, seed)
    if pool is None:
        return None, why, ""
    if not clones:
        return FreshLast(torch, pool, compare), "", ""
    lack = room(torch, dist, dev, 2 * max(clones, 2) * tuple_bytes + 2 * out_bytes + GIB)
    if lack:
        return FreshLast(torch, pool, compare), "", lack
    return CheckedClones(torch, checked, pool, compare, clones, length_seed), "", ""
