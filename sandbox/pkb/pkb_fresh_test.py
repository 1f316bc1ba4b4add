#!/usr/bin/env python3
"""Tests of the checks of the timed calls (pkb_fresh.py: FreshLast, the default, and
CheckedClones, --timed-check clones; through pkb_timing.time_alternated and the driver's
pkb_eval.timed_check), with cheating candidates, against pkb_compare_test.py's stand-in
torch (no GPU, no torch needed). Run by ctest (CMakeLists.txt)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pkb_compare  # noqa: E402
import pkb_eval  # noqa: E402
import pkb_fresh  # noqa: E402
import pkb_timing  # noqa: E402
from pkb_compare_test import Dist, T, Torch  # noqa: E402


def fresh_last(torch, dist, dev, make, checked, out_bytes, compare, seed=0):
    """pkb_fresh.timed_checker's FreshLast (--timed-check last), or (None, why not)."""
    return pkb_fresh.timed_checker(torch, dist, dev, make, checked, out_bytes, compare, seed=seed)[:2]


class ProcessGroup:
    pass


class FreshInputs(unittest.TestCase):
    def setUp(self):
        self.made = []

    def make(self, length):
        def make(k):
            self.made.append(k)
            # A tensor, a step count that changes with the trial (as problem 40's), a group.
            return (T([10.0 * (k + 1) + i for i in range(length)]), 3 + k, ProcessGroup())

        return make

    def build(self, torch=None, dist=None, length=2):
        return fresh_last(torch or Torch(), dist or Dist(), "dev", self.make(length),
                          (T([1.0, 2.0]), 3, ProcessGroup()), 100, lambda want, got: None)

    def test_each_side_has_its_own_copy_refilled_in_place_from_the_two_fresh_tuples(self):
        fresh, why = self.build()
        self.assertEqual((self.made, why), ([0, 1], ""))
        ref0, cand0 = fresh.args("ref", 0), fresh.args("cand", 0)
        self.assertIsNot(ref0[0], cand0[0])
        self.assertEqual((ref0[0].v, cand0[0].v), ([10.0, 11.0], [10.0, 11.0]))
        ref1 = fresh.args("ref", 1)
        self.assertIs(ref1[0], ref0[0])  # the same tensor, the next round's contents
        self.assertEqual(ref1[0].v, [20.0, 21.0])
        # The round's own plain values and process group, as the tuple was made.
        self.assertEqual(ref1[1], 4)
        self.assertIs(ref1[2], fresh.pool[1][2])

    def test_no_room_on_this_or_another_rank_is_no_fresh_inputs_and_no_inputs_made(self):
        fresh, why = self.build(torch=Torch(free_bytes=1 << 20))
        self.assertIsNone(fresh)
        self.assertIn("no room for fresh inputs", why)
        fresh, why = self.build(dist=Dist(peer_flags=0))
        self.assertIsNone(fresh)
        self.assertEqual(self.made, [])

    def test_inputs_alike_for_every_trial_get_small_random_integers_each(self):
        # As PKB's collectives: every trial's input is the rank's number, so a result worked
        # out once would match every fresh tuple too. An integer tensor stays as made.
        alike = lambda k: (T([2.0, 2.0, 2.0, 2.0]), T([1, 2], "int64"))  # noqa: E731
        fresh, _ = fresh_last(Torch(), Dist(), "dev", alike, alike(None), 100, lambda w, g: None, seed=7)
        a, b = fresh.pool[0][0].v, fresh.pool[1][0].v
        self.assertNotEqual(a, b)
        self.assertNotEqual(a, [2.0] * 4)
        self.assertTrue(all(v == int(v) and -4 <= v <= 4 for v in a + b))
        self.assertEqual((fresh.pool[0][1].v, fresh.pool[1][1].v), ([1, 2], [1, 2]))

    def test_a_fixed_tensor_beside_one_that_changes_with_the_trial_is_left_as_made(self):
        # As a table of cosines beside random activations: the activations already make a
        # result worked out once wrong, and the reference may rely on the table.
        make = lambda k: (T([1.0 + (k or 0), 2.0]), T([0.5, 0.25]))  # noqa: E731
        fresh, _ = fresh_last(Torch(), Dist(), "dev", make, make(None), 100, lambda w, g: None)
        self.assertEqual((fresh.pool[0][1].v, fresh.pool[1][1].v), ([0.5, 0.25], [0.5, 0.25]))
        self.assertEqual((fresh.pool[0][0].v, fresh.pool[1][0].v), ([1.0, 2.0], [2.0, 2.0]))

    def test_fresh_tuples_of_another_shape_are_passed_over(self):
        # As PKB's 81_sam3, whose counts follow the trial modulo 3: tries 2 and 5 fit.
        made = self.make(2)
        fresh, _ = fresh_last(Torch(), Dist(), "dev", lambda k: made(k) if k % 3 == 2 else (T([0.0] * 3),),
                              (T([1.0, 2.0]), 3, ProcessGroup()), 100, lambda w, g: None)
        self.assertEqual(self.made, [2, 5])
        self.assertEqual((fresh.pool[0][1], fresh.pool[1][1]), (5, 8))

    def test_no_two_tries_of_the_checked_shape_is_no_fresh_inputs(self):
        fresh, why = self.build(length=3)
        self.assertIsNone(fresh)
        self.assertIn("shapes change with the trial: 0 of 8", why)


def honest(x, *rest):
    return T([sum(x.v)])


class Cheat:
    """A candidate that hands back an earlier result: keyed on the input tensor's identity
    (an address), or the last one while it is called back to back (no barrier between)."""

    def __init__(self, dist, key):
        self.dist, self.key, self.cache, self.last = dist, key, {}, None

    def __call__(self, x, *rest):
        if self.key == "object":
            if id(x) not in self.cache:
                self.cache[id(x)] = honest(x)
            return self.cache[id(x)]
        if self.key == "contents":
            return self.cache.setdefault(tuple(x.v), honest(x))
        if self.last is None or self.last[0] != self.dist.barriers:  # first call since the barrier
            self.last = (self.dist.barriers, honest(x))
        return self.last[1]


class TellsApart:
    """A candidate that computes only for inputs it did not meet in its first `warm` calls
    (the warmup's) and hands back a made-up result for the rest."""

    def __init__(self, warm=3):
        self.warm, self.met = warm, set()

    def __call__(self, x, *rest):
        if self.warm > 0:
            self.warm -= 1
            self.met.add(id(x))
        return T([0.0]) if id(x) in self.met else honest(x)


class CountsCalls:
    """A candidate that computes only the calls that may be its block's last: those whose
    count since the block began (a barrier) has reached the last block's length."""

    def __init__(self, dist):
        self.dist, self.block, self.count, self.expect = dist, None, 0, None

    def __call__(self, x, *rest):
        if self.dist.barriers != self.block:
            self.block, self.expect, self.count = self.dist.barriers, (self.count or None), 0
        self.count += 1
        return honest(x) if self.expect is None or self.count >= self.expect else T([0.0])


class OwnBuffer:
    """An honest candidate that returns one buffer of its own, overwritten every call."""

    def __init__(self):
        self.out = T([0.0])

    def __call__(self, x, *rest):
        self.out.copy_(honest(x))
        return self.out


class TimedChecks:
    """What both checks of the timed calls must do, whichever make_fresh() gives."""

    def timed_failure(self, cand_of, make=lambda k: (T([5.0 + k, 6.0 * k]),)):
        torch, dist = Torch(), Dist()
        fresh = self.make_fresh(torch, dist, make)
        groups = lambda: [(T([1.0, 2.0]),), (T([1.0, 2.0]),), (T([1.0, 2.0]),)]  # noqa: E731
        pkb_timing.time_alternated(torch, dist, "dev", (honest, groups()), (cand_of(dist), groups()), warmup=3,
                                   iters=40, min_ms=0, rounds=4, fresh=fresh)
        return fresh.failure

    def test_a_solution_that_computes_every_call_passes(self):
        self.assertIsNone(self.timed_failure(lambda dist: honest))

    def test_a_solution_that_returns_a_buffer_of_its_own_passes(self):
        self.assertIsNone(self.timed_failure(lambda dist: OwnBuffer()))

    def test_a_cache_keyed_on_contents_is_not_caught(self):
        # The documented limit: the block's calls repeat their inputs, as PKB's do.
        self.assertIsNone(self.timed_failure(lambda dist: Cheat(dist, "contents")))


class TimedCallsChecked(TimedChecks, unittest.TestCase):
    """time_alternated with a FreshLast: what the last call's check catches."""

    def make_fresh(self, torch, dist, make):
        return fresh_last(torch, dist, "dev", make, (T([1.0, 2.0]),), 4,
                          lambda want, got: pkb_compare.compare(torch, want, got, 0, 0))[0]

    def test_a_cache_keyed_on_the_input_object_is_caught_once_the_fresh_inputs_change(self):
        failure = self.timed_failure(lambda dist: Cheat(dist, "object"))
        self.assertEqual((failure["round"], failure["tensor"]), (1, "output"))

    def test_a_replay_of_the_first_call_of_a_block_is_caught_in_the_first_round(self):
        failure = self.timed_failure(lambda dist: Cheat(dist, "replay"))
        self.assertEqual(failure["round"], 0)

    def test_an_answer_written_down_for_inputs_alike_in_every_trial_is_caught(self):
        alike = lambda k: (T([1.0, 2.0]),)  # noqa: E731
        self.assertIsNone(self.timed_failure(lambda dist: honest, make=alike))
        failure = self.timed_failure(lambda dist: lambda x: T([3.0]), make=alike)  # the sum of [1, 2]
        self.assertEqual(failure["round"], 0)
        self.assertEqual(self.timed_failure(lambda dist: Cheat(dist, "object"), make=alike)["round"], 1)

    def test_a_solution_that_tells_the_checked_call_apart_is_not_caught(self):
        # The other documented limit: the last call's inputs are the only ones the warmup
        # never used, and every block is as long. CheckedClones catches both (below).
        self.assertIsNone(self.timed_failure(lambda dist: TellsApart()))
        self.assertIsNone(self.timed_failure(lambda dist: CountsCalls(dist)))


class TimedCallsCheckedOnClones(TimedChecks, unittest.TestCase):
    """The same candidates under a CheckedClones (--timed-check clones): the same catches,
    and the solution that tells the checked call apart. (Which round catches one is not
    asserted: the blocks' lengths are drawn.)"""

    def make_fresh(self, torch, dist, make):
        return pkb_fresh.timed_checker(torch, dist, "dev", make, (T([1.0, 2.0]),), 4,
                                       lambda want, got: pkb_compare.compare(torch, want, got, 0, 0), clones=3,
                                       length_seed=5)[0]

    def test_a_cache_keyed_on_the_input_object_is_caught(self):
        self.assertIsNotNone(self.timed_failure(lambda dist: Cheat(dist, "object")))

    def test_a_replay_of_the_first_call_of_a_block_is_caught(self):
        self.assertIsNotNone(self.timed_failure(lambda dist: Cheat(dist, "replay")))

    def test_an_answer_written_down_for_inputs_alike_in_every_trial_is_caught(self):
        alike = lambda k: (T([1.0, 2.0]),)  # noqa: E731
        self.assertIsNone(self.timed_failure(lambda dist: honest, make=alike))
        self.assertIsNotNone(self.timed_failure(lambda dist: lambda x: T([3.0]), make=alike))

    def test_a_solution_that_tells_the_checked_call_apart_is_caught(self):
        self.assertIsNotNone(self.timed_failure(lambda dist: TellsApart()))
        self.assertIsNotNone(self.timed_failure(lambda dist: CountsCalls(dist)))


class DriverTimedCheck(unittest.TestCase):
    """pkb_eval.timed_check: what --timed-check picks, on the checkout's inputs."""

    def pick(self, mode, free_bytes=1 << 40, rank=0, alike=False):
        torch = Torch(free_bytes)
        torch.bfloat16 = "bfloat16"
        made = []

        def create_input_tensor(rank, world, problem_id, mn, dtype, trial, device):
            made.append(trial)
            return (T([float(rank if alike else trial + rank)] * 512),)

        args = pkb_eval.parse_args(["--pkb", "p", "--problem-id", "18", "--reference", "r", "--solution", "s",
                                    "--out", "o", "--timed-check", mode])
        ctx = (torch, Dist(), create_input_tensor, "dev")
        fresh, why, no_clones = pkb_eval.timed_check(args, ctx, rank, 2, 1,
                                                     create_input_tensor(rank, 2, 18, None, None, 1, "dev"), 1024, 3)
        self.assertEqual(why, "")
        return fresh, no_clones, made[1:]

    def test_last_is_a_fresh_last_on_trial_numbers_no_check_uses(self):
        fresh, no_clones, made = self.pick("last")
        self.assertIsInstance(fresh, pkb_fresh.FreshLast)
        self.assertEqual((no_clones, made), ("", [5 + 8, 5 + 8 + 1]))  # 5 trials, 8 tries each

    def test_clones_are_checked_clones_alike_on_every_rank_or_a_fresh_last_without_room(self):
        fresh, _, _ = self.pick("clones")
        self.assertIsInstance(fresh, pkb_fresh.CheckedClones)
        self.assertEqual(len(fresh.own["cand"]), 3)
        other = self.pick("clones", rank=1)[0]
        self.assertEqual([fresh.length(r, 100) for r in range(8)], [other.length(r, 100) for r in range(8)])
        # Inputs alike in every trial (PKB's collectives) get each rank's own random integers.
        mine, theirs = self.pick("clones", alike=True)[0], self.pick("clones", rank=1, alike=True)[0]
        self.assertNotEqual(mine.sources[1][0].v, theirs.sources[1][0].v)
        # Room for FreshLast's four tuples and two outputs (1 KiB each here, and a GiB
        # spare), not for the clones' six tuples and two outputs (the stand-in's free
        # memory does not shrink as the fresh tuples are made).
        fresh, no_clones, made = self.pick("clones", free_bytes=(1 << 30) + 7 * 1024)
        self.assertIsInstance(fresh, pkb_fresh.FreshLast)
        self.assertIn("no room", no_clones)
        self.assertEqual(made, [13, 14])  # the fresh tuples made once, for either


class CheckedClonesTuples(unittest.TestCase):
    def build(self, count):
        make = lambda k: (T([10.0 * (k + 1), 1.0]), 3 + k)  # noqa: E731
        return pkb_fresh.timed_checker(Torch(), Dist(), "dev", make, (T([1.0, 2.0]), 3), 4,
                                       lambda want, got: None, clones=count, length_seed=1)[0]

    def test_every_tuple_changes_contents_every_round_and_keeps_its_tensors(self):
        for count in (1, 2, 3, 4, 7):
            clones = self.build(count)
            rounds, contents = [], []
            for r in range(-1, 6):  # each round's contents as it is filled (in place)
                rounds.append(clones.groups("cand", r))
                contents.append([(g[0].v[:], g[1]) for g in rounds[-1]])
            n = max(count, 2)
            self.assertEqual([len(g) for g in rounds], [n] * 7)
            for before, after in zip(rounds, rounds[1:]):
                for j in range(n):
                    self.assertIs(after[j][0], before[j][0])  # the same tensor, refilled
            for r in range(1, len(contents)):
                for j in range(n):
                    self.assertNotEqual(contents[r][j], contents[r - 1][j], (count, r, j))
                    self.assertNotEqual(contents[r][j], contents[r][(j + 1) % n], (count, r, j))

    def test_both_sides_get_the_same_contents_in_tuples_of_their_own(self):
        clones = self.build(3)
        ref, cand = clones.groups("ref", 2), clones.groups("cand", 2)
        self.assertEqual([g[0].v for g in ref], [g[0].v for g in cand])
        self.assertTrue(all(a[0] is not b[0] for a, b in zip(ref, cand)))

    def test_block_lengths_are_drawn_alike_on_every_rank_around_the_usual(self):
        clones = self.build(3)
        first = [clones.length(r, 10) for r in range(20)]
        self.assertEqual(first, [clones.length(r, 10) for r in range(20)])  # one a round
        self.assertTrue(all(5 <= n <= 15 for n in first))
        self.assertGreater(len(set(first)), 1)
        again = self.build(3)  # another rank: the same seed, the same lengths
        self.assertEqual(first, [again.length(r, 10) for r in range(20)])


if __name__ == "__main__":
    unittest.main()
