"""How kforge's PKB driver (pkb_eval.py) judges a call: the candidate's outputs against
the reference's as PKB compares them (a cast to float32, atol/rtol; kforge also requires
equal dtypes), and the candidate's inputs after its call against the reference's (an
input the reference leaves as it is, the candidate must leave too: PKB does not check
this). Tensors are compared a slice at a time, so that one of tens of GiB (problem 68's
first input is 53 GiB on the H200) needs no float32 copy of its own size. torch comes in
as an argument, so that pkb_compare_test.py can use a stand-in. Written for kforge, not
taken from PKB."""

SLICE = 1 << 26  # elements compared at a time: 256 MiB as float32


def named_leaves(y, name=None):
    """(name, value) leaves as PKB's save_tensor names outputs: the value itself
    ("output"), output_<i> for a tuple or list, the keys of a dict; nested containers (a
    list of tensors inside a tuple, say) go on down as output_<i>_<j>. `name` replaces
    "output" (inputs are input_<i>)."""
    if isinstance(y, (tuple, list)):
        out = []
        for i, v in enumerate(y):
            out += named_leaves(v, "%s_%d" % (name or "output", i))
        return out
    if isinstance(y, dict):
        out = []
        for k in sorted(y, key=str):
            out += named_leaves(y[k], str(k) if name is None else "%s_%s" % (name, k))
        return out
    return [(name or "output", y)]


def same_scalar(a, b, atol, rtol):
    """A non-tensor leaf: numbers within the tolerances, anything else equal."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= atol + rtol * abs(a)
    return type(a) is type(b) and a == b


def slices(a, b):
    """a's and b's elements, flat, as pairs of slices of at most SLICE elements."""
    fa, fb = a.detach().reshape(-1), b.detach().reshape(-1)
    for s in range(0, fa.numel(), SLICE):
        yield fa[s:s + SLICE], fb[s:s + SLICE]


def not_close(torch, a, b, atol, rtol, equal_nan=False):
    """(elements not within atol/rtol of each other, the largest absolute difference) of
    two tensors of one shape, after a cast to float32; None when every element is."""
    bad, worst = 0, 0.0
    for x, y in slices(a, b):
        x, y = x.float(), y.float()
        if torch.allclose(x, y, atol=atol, rtol=rtol, equal_nan=equal_nan):
            continue
        bad += int((~torch.isclose(x, y, atol=atol, rtol=rtol, equal_nan=equal_nan)).sum().item())
        worst = max(worst, float((x - y).abs().max().item()))
    return (bad, worst) if bad else None


def compare(torch, ref, got, atol, rtol, equal_nan=False):
    """None when got matches ref, else a dict naming the first tensor that differs."""
    r, g = named_leaves(ref), named_leaves(got)
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
        off = not_close(torch, a, b, atol, rtol, equal_nan)
        if off:
            return {"tensor": name, "max_abs": off[1], "bad": off[0], "total": int(a.numel()),
                    "message": "%s: %d of %d elements differ, max abs error %.6g (atol %g, rtol %g)"
                    % (name, off[0], a.numel(), off[1], atol, rtol)}
    return None


def unequal(torch, a, b):
    """How many elements of two tensors differ bit for bit (a NaN differs from itself);
    every element when their shapes or dtypes differ."""
    if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
        return int(max(a.numel(), b.numel()))
    n = 0
    for x, y in slices(a, b):
        if not torch.equal(x, y):
            n += int((x != y).sum().item())
    return n


def tensor_leaves(torch, x):
    return [(n, v) for n, v in named_leaves(x, "input") if isinstance(v, torch.Tensor)]


def untouched(torch, ref_x, cand_x):
    """The names of the inputs the reference left as they were: called after the
    reference's call and before the candidate's, on two argument tuples made alike. An
    input no slice can be taken of (a sparse tensor) is left out: what the harness cannot
    compare is no candidate's fault."""
    kept = set()
    for (n, a), (_, b) in zip(tensor_leaves(torch, ref_x), tensor_leaves(torch, cand_x)):
        try:
            if unequal(torch, a, b) == 0:
                kept.add(n)
        except Exception:
            pass
    return kept


def changed_input(torch, ref_x, cand_x, kept):
    """None, or a mismatch naming the first input in `kept` (untouched()'s) that the
    candidate's call changed. A candidate that writes into its input saves the copy the
    reference makes (1_allreduce clones before it reduces), and its timed calls then run
    on what earlier calls left."""
    for (name, a), (_, b) in zip(tensor_leaves(torch, ref_x), tensor_leaves(torch, cand_x)):
        n = unequal(torch, a, b) if name in kept else 0
        if n:
            return {"tensor": name, "bad": n, "total": int(a.numel()),
                    "message": "%s: the solution changed %d of its %d elements, which the reference leaves "
                    "as they are: write results into new tensors, not into the inputs" % (name, n, a.numel())}
    return None
