#!/usr/bin/env python3
"""Tests of how kforge's PKB driver judges a call (pkb_compare.py: outputs in slices, the
inputs a candidate may not change), against a stand-in torch whose tensors are Python
lists (no GPU, no torch needed; pkb_fresh_test.py uses it too). Run by ctest
(CMakeLists.txt)."""
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pkb_compare  # noqa: E402


def same(a, b):
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


class Dtype:
    def __init__(self, name):
        self.name, self.is_floating_point = name, not name.startswith("int")

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name


class T:
    """A flat tensor of Python numbers."""

    device = "dev"

    def __init__(self, values, dtype="bfloat16"):
        self.v, self.dtype = list(values), Dtype(str(dtype))

    def to(self, dtype):
        return T([float(a) for a in self.v], dtype)

    shape = property(lambda self: (len(self.v),))

    def detach(self):
        return self

    def reshape(self, *shape):
        return self

    def numel(self):
        return len(self.v)

    def element_size(self):
        return 2

    def __getitem__(self, s):
        return T(self.v[s], self.dtype)

    def float(self):
        return T(self.v, "float32")

    def clone(self):
        return T(self.v, self.dtype)

    def copy_(self, src):
        self.v[:] = src.v

    def __sub__(self, o):
        return T([a - b for a, b in zip(self.v, o.v)])

    def __ne__(self, o):
        return T([not same(a, b) for a, b in zip(self.v, o.v)])

    def __invert__(self):
        return T([not a for a in self.v])

    def abs(self):
        return T([abs(a) for a in self.v])

    def max(self):
        return T([max(self.v)])

    def sum(self):
        return T([sum(self.v)])

    def item(self):
        return self.v[0]

    def tolist(self):
        return self.v


class Torch:
    """What pkb_compare, pkb_fresh and pkb_timing use of torch."""

    Tensor = T
    int8 = int32 = int64 = float64 = "dtype"

    def __init__(self, free_bytes=1 << 40):
        self.slices_compared = 0

        class Event:
            def __init__(self, enable_timing=False):
                pass

            def record(self):
                pass

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return 1.0

        class Cuda:
            synchronize = staticmethod(lambda: None)
            mem_get_info = staticmethod(lambda dev: (free_bytes, free_bytes))
            memory_reserved = staticmethod(lambda dev: 0)
            memory_allocated = staticmethod(lambda dev: 0)

        Cuda.Event = Event
        self.cuda = Cuda

    @staticmethod
    def close(a, b, atol, rtol, equal_nan):
        return (equal_nan and same(a, b)) or abs(a - b) <= atol + rtol * abs(b)

    def isclose(self, x, y, atol, rtol, equal_nan=False):
        return T([self.close(a, b, atol, rtol, equal_nan) for a, b in zip(x.v, y.v)])

    def allclose(self, x, y, atol, rtol, equal_nan=False):
        self.slices_compared += 1
        return all(self.isclose(x, y, atol, rtol, equal_nan).v)

    def equal(self, x, y):
        return all(a == b for a, b in zip(x.v, y.v))  # a NaN is unequal to itself, as in torch

    def tensor(self, values, device=None, dtype=None):
        return T(values)

    class Generator:
        def __init__(self, device=None):
            self.rng = random.Random()

        def manual_seed(self, seed):
            self.rng.seed(seed)

    @staticmethod
    def randint(low, high, shape, generator, device=None, dtype=None):
        return T([generator.rng.randrange(low, high) for _ in range(shape[0])], "int64")


class Dist:
    """A rank whose peers bring `peer_flags` to every MIN all-reduce (the agreements)."""

    class ReduceOp:
        MIN, MAX = "min", "max"

    def __init__(self, peer_flags=1):
        self.peer_flags, self.barriers = peer_flags, 0

    def barrier(self):
        self.barriers += 1

    def all_reduce(self, t, op=None):
        if op == self.ReduceOp.MIN:
            t.v = [min(t.v[0], self.peer_flags)]


class ComparingOutputs(unittest.TestCase):
    def setUp(self):
        self.torch, self.slice = Torch(), pkb_compare.SLICE
        pkb_compare.SLICE = 3

    def tearDown(self):
        pkb_compare.SLICE = self.slice

    def test_a_tensor_longer_than_a_slice_is_compared_a_slice_at_a_time(self):
        want = T([0.0] * 10)
        got = T([0.0, 0.5, 0, 0, 0, 0, 0, 0, 0, -2.0])
        bad = pkb_compare.compare(self.torch, want, got, 1e-2, 1e-2)
        self.assertEqual((bad["tensor"], bad["bad"], bad["total"], bad["max_abs"]), ("output", 2, 10, 2.0))
        self.assertEqual(self.torch.slices_compared, 4)
        self.assertIsNone(pkb_compare.compare(self.torch, want, T([0.001] * 10), 1e-2, 1e-2))

    def test_nan_matches_nan_only_when_asked(self):
        want, got = T([float("nan"), 1.0]), T([float("nan"), 1.0])
        self.assertIsNotNone(pkb_compare.compare(self.torch, want, got, 1e-2, 1e-2))
        self.assertIsNone(pkb_compare.compare(self.torch, want, got, 1e-2, 1e-2, equal_nan=True))

    def test_a_wrong_dtype_and_missing_outputs_are_named(self):
        bad = pkb_compare.compare(self.torch, (T([1.0]), T([2.0])), (T([1.0]), T([2.0], "float32")), 0, 0)
        self.assertEqual(bad["tensor"], "output_1")
        self.assertIn("dtype float32, want bfloat16", bad["message"])
        bad = pkb_compare.compare(self.torch, (T([1.0]), T([2.0])), (T([1.0]),), 0, 0)
        self.assertIn("want ['output_0', 'output_1']", bad["message"])


class ChangedInputs(unittest.TestCase):
    def setUp(self):
        self.torch = Torch()
        self.ref_x = (T([1.0, 2.0, 3.0]), [T([4.0]), T([5.0])], 7)
        self.cand_x = (T([1.0, 2.0, 3.0]), [T([4.0]), T([5.0])], 7)

    def test_an_input_the_reference_leaves_the_candidate_must_leave(self):
        kept = pkb_compare.untouched(self.torch, self.ref_x, self.cand_x)
        self.assertEqual(kept, {"input_0", "input_1_0", "input_1_1"})
        self.cand_x[1][1].v[0] = 0.0  # as an all-reduce into the input, without the reference's clone
        bad = pkb_compare.changed_input(self.torch, self.ref_x, self.cand_x, kept)
        self.assertEqual((bad["tensor"], bad["bad"], bad["total"]), ("input_1_1", 1, 1))
        self.assertIn("new tensors, not into the inputs", bad["message"])

    def test_an_input_the_reference_changes_is_the_candidates_to_change(self):
        self.ref_x[0].v[0] = 9.0  # the reference wrote into its first input
        kept = pkb_compare.untouched(self.torch, self.ref_x, self.cand_x)
        self.assertNotIn("input_0", kept)
        self.cand_x[0].v[:] = [0.0, 0.0, 0.0]
        self.assertIsNone(pkb_compare.changed_input(self.torch, self.ref_x, self.cand_x, kept))

    def test_an_input_the_harness_cannot_slice_is_left_out(self):
        class Sparse(T):
            def reshape(self, *shape):
                raise RuntimeError("reshape is not implemented for sparse tensors")

        self.assertEqual(pkb_compare.untouched(self.torch, (Sparse([1.0]), T([2.0])), (Sparse([1.0]), T([2.0]))),
                         {"input_1"})

    def test_an_input_with_a_nan_is_not_held_against_the_candidate(self):
        ref_x, cand_x = (T([float("nan")]),), (T([float("nan")]),)
        kept = pkb_compare.untouched(self.torch, ref_x, cand_x)
        self.assertIsNone(pkb_compare.changed_input(self.torch, ref_x, cand_x, kept))


if __name__ == "__main__":
    unittest.main()
