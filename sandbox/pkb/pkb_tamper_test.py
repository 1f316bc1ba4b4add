#!/usr/bin/env python3
"""Tests of pkb_tamper.py (what a candidate changes in the process it shares with the
checker), against stand-in torch modules (no GPU, no torch needed). Run by ctest
(CMakeLists.txt)."""
import os
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pkb_tamper  # noqa: E402


def stand_in_torch():
    """A torch-shaped set of modules: functions, a Tensor class with methods, CUDA events,
    submodules and data, and the C hooks' mode-stack lengths."""
    torch = types.ModuleType("torch")
    torch.allclose = lambda a, b, **kw: a == b
    torch.matmul = lambda a, b: a * b
    torch._private_helper = lambda: None
    torch.float32 = "dtype"

    class Tensor:
        def float(self):
            return self

        def __matmul__(self, other):
            return self

    torch.Tensor = Tensor
    torch.cuda = types.ModuleType("torch.cuda")

    class Event:
        def elapsed_time(self, end):
            return 1.0

    torch.cuda.Event = Event
    torch.cuda.synchronize = lambda: None
    torch.nn = types.ModuleType("torch.nn")
    torch.nn.functional = types.ModuleType("torch.nn.functional")
    torch.nn.functional.linear = lambda x, w: x
    torch._C = types.ModuleType("torch._C")
    torch._C.modes = 0
    torch._C._len_torch_function_stack = lambda: torch._C.modes
    dist = types.ModuleType("torch.distributed")
    dist.all_reduce = lambda t, op=None: None
    return torch, dist


class Watched(unittest.TestCase):
    def setUp(self):
        self.torch, self.dist = stand_in_torch()
        self.own = types.ModuleType("pkb_eval_stand_in")
        self.own.compare = lambda ref, got: None
        self.watched = pkb_tamper.Watched(
            self.torch, pkb_tamper.default_places(self.torch, self.dist, {"pkb_eval": self.own}))

    def test_calls_that_change_nothing_name_nothing(self):
        t = self.torch
        t.allclose(t.matmul(2, 3), 6)
        t.cuda.Event().elapsed_time(t.cuda.Event())
        t.Tensor().float() @ t.Tensor()
        self.dist.all_reduce(None)
        self.assertEqual(self.watched.changed(), [])

    def test_a_replaced_check_function_is_named(self):
        self.torch.allclose = lambda a, b, **kw: True
        self.assertEqual(self.watched.changed(), ["torch.allclose"])

    def test_a_slowed_reference_op_and_collective_are_named(self):
        real = self.torch.matmul
        self.torch.matmul = lambda a, b: real(a, b)
        self.dist.all_reduce = lambda t, op=None: None
        self.assertEqual(self.watched.changed(), ["torch.distributed.all_reduce", "torch.matmul"])

    def test_a_patched_event_and_a_method_added_to_tensor_are_named(self):
        self.torch.cuda.Event.elapsed_time = lambda self, end: 0.001
        self.torch.Tensor.__add__ = lambda self, other: self  # shadows what it inherited
        self.assertEqual(self.watched.changed(), ["torch.Tensor.__add__", "torch.cuda.Event.elapsed_time"])

    def test_the_harness_own_functions_and_the_clocks_are_watched(self):
        self.own.compare = lambda ref, got: None
        real = pkb_tamper.time.perf_counter
        try:
            pkb_tamper.time.perf_counter = lambda: 0.0
            self.assertEqual(self.watched.changed(), ["pkb_eval.compare", "time.perf_counter"])
        finally:
            pkb_tamper.time.perf_counter = real

    def test_a_mode_left_on_and_a_profile_hook_are_named(self):
        self.torch._C.modes = 1
        sys.setprofile(lambda *a: None)
        try:
            self.assertEqual(self.watched.changed(), ["a torch function mode", "sys.setprofile"])
        finally:
            sys.setprofile(None)
        self.torch._C.modes = 0
        self.assertEqual(self.watched.changed(), [])

    def test_what_no_call_sees_is_not_named(self):
        self.torch.float32 = "another dtype"  # data, not a function
        self.torch.new_helper = lambda: None  # a name added to a module replaces nothing
        self.torch._private_helper = lambda: 1  # torch's private names are not watched
        self.torch.cuda.memory = types.ModuleType("torch.cuda.memory")  # a submodule
        self.assertEqual(self.watched.changed(), [])


class Settle(unittest.TestCase):
    """torch 2.x's `import torch._dynamo` (which torch.compile's first call makes) replaces
    torch.manual_seed; a stand-in package that does the same on the same import."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        pkg = os.path.join(self.dir.name, "lazy_torch")
        os.mkdir(pkg)
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write("def manual_seed(seed):\n    return seed\n")
        with open(os.path.join(pkg, "_dynamo.py"), "w") as f:
            f.write("import lazy_torch\n_seed = lazy_torch.manual_seed\n"
                    "lazy_torch.manual_seed = lambda seed: _seed(seed)\n")
        sys.path.insert(0, self.dir.name)
        import lazy_torch
        self.torch = lazy_torch

    def tearDown(self):
        sys.path.remove(self.dir.name)
        for name in ("lazy_torch", "lazy_torch._dynamo"):
            sys.modules.pop(name, None)
        self.dir.cleanup()

    def test_torch_own_change_on_a_lazy_import_is_not_named_and_a_later_patch_is(self):
        unwrapped = self.torch.manual_seed
        watched = pkb_tamper.Watched(self.torch, [("torch", self.torch, True)])
        self.assertIsNot(self.torch.manual_seed, unwrapped)  # settle() made the import's change
        import lazy_torch._dynamo  # noqa: F401  (the candidate's torch.compile)
        self.assertEqual(watched.changed(), [])
        self.torch.manual_seed = lambda seed: 0
        self.assertEqual(watched.changed(), ["torch.manual_seed"])

    def test_a_torch_this_process_did_not_import_is_left_alone(self):
        other = types.ModuleType("lazy_torch")  # the same name, not the module in sys.modules
        pkb_tamper.settle(other)
        self.assertNotIn("lazy_torch._dynamo", sys.modules)

if __name__ == "__main__":
    unittest.main()
