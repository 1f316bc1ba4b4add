"""What a PKB candidate changes in the process it shares with kforge's checker.

kforge's one job runs the candidate in the Python process that also runs the reference,
the comparison and the timer. (PKB runs the reference and the candidate in jobs of their
own and compares in its launcher, but the candidate's job writes its own outputs and times
itself.) A candidate that replaces a function those call fools them: torch.allclose to
pass the check, CUDA events to shorten its time, a collective or an op the reference uses
to slow the reference down.

Watched records, before the candidate is loaded, the functions and classes of the modules
the harness and the references use, and the hooks that reach every call (a trace or
profile function, torch function and dispatch modes); changed() names what differs since.
This catches replacement by assignment (monkey-patching). It cannot catch a candidate
that reaches into this module to undo it, or registers its own kernel for an aten op:
only a process of the candidate's own would (as kforge's native problems have). Written
for kforge, not taken from PKB."""
import builtins
import gc
import importlib
import sys
import time
import types


def members(holder, public_only):
    """The name -> object entries of a module or class that a patch would replace: a
    module's functions and classes (its submodules and data left out), a class's whole
    dict (a method added to a class shadows the one it inherited)."""
    if isinstance(holder, types.ModuleType):
        return {k: v for k, v in vars(holder).items()
                if callable(v) and not isinstance(v, types.ModuleType) and not (public_only and k.startswith("_"))}
    return dict(vars(holder))


def hooks(torch):
    """What reaches every call without replacing a function."""
    c = getattr(torch, "_C", None)
    out = {"sys.settrace": sys.gettrace(), "sys.setprofile": sys.getprofile()}
    for name in ("_len_torch_function_stack", "_len_torch_dispatch_stack"):
        fn = getattr(c, name, None)
        if fn is not None:
            out["a torch %s mode" % name.split("_")[3]] = fn()
    return out


def settle(torch):
    """Makes now the change torch makes to itself on a lazy import, so that an honest
    candidate whose torch.compile triggers it is not taken for a patcher: importing
    torch._dynamo replaces torch.manual_seed with a wrapper that keeps Dynamo out of it
    (torch 2.x, torch/_dynamo/__init__.py; seen on the H200 with torch 2.11). Only the torch
    this process imported, and nothing where it has no _dynamo."""
    if sys.modules.get(torch.__name__) is not torch:
        return
    try:
        importlib.import_module(torch.__name__ + "._dynamo")
    except Exception:  # a Dynamo that cannot load here cannot change torch later either
        pass


class Watched:
    """places: (label, module or class, public_only) triples, recorded now, after settle()."""

    def __init__(self, torch, places):
        settle(torch)
        self.torch, self.places = torch, places
        self.before = [members(holder, public) for _, holder, public in places]
        self.hooks = hooks(torch)

    def changed(self):
        """Sorted names of what was replaced, added to a class or removed since; [] if
        nothing was."""
        out = []
        for (label, holder, public), before in zip(self.places, self.before):
            now = members(holder, public)
            for name, obj in before.items():
                if now.get(name) is not obj:
                    out.append("%s.%s" % (label, name))
            if not isinstance(holder, types.ModuleType):
                out += ["%s.%s" % (label, name) for name in now if name not in before]
        now = hooks(self.torch)
        out += [name for name, was in self.hooks.items() if now.get(name) != was]
        return sorted(out)


def default_places(torch, dist, own):
    """What the harness and the references call: torch's, torch.distributed's,
    torch.cuda's and torch.nn.functional's public functions, torch.Tensor's and CUDA
    events' methods, the clocks, the collector, the builtins, and kforge's own modules
    (`own`: label -> module, every name)."""
    places = [("torch", torch, True), ("torch.distributed", dist, True), ("torch.cuda", torch.cuda, True),
              ("torch.nn.functional", torch.nn.functional, True), ("torch.Tensor", torch.Tensor, False),
              ("torch.cuda.Event", torch.cuda.Event, False), ("time", time, True), ("gc", gc, True),
              ("builtins", builtins, True)]
    return places + [(label, mod, False) for label, mod in own.items()]
