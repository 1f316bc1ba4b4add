#!/usr/bin/env python3
"""Tests of pkb_eval.py's timing, input groups and freeing of dropped process groups
against a stand-in torch (no GPU, no torch needed): a clock that the timed calls advance,
CUDA events that read it, an all-reduce that merges in another rank's values, and a group
registry. Run by ctest (CMakeLists.txt)."""
import gc
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pkb_eval  # noqa: E402
import pkb_timing  # noqa: E402


class Tensor:
    """A tensor of `nbytes` bytes, or one holding (nested) values."""

    def __init__(self, nbytes=0, values=None):
        self.nbytes, self.values, self.clones = nbytes, values, 0

    def element_size(self):
        return 1

    def numel(self):
        return self.nbytes

    def clone(self):
        self.clones += 1
        return Tensor(self.nbytes)

    def tolist(self):
        return self.values

    def item(self):
        return self.values[0]


class Torch:
    """What pkb_eval's timing uses of torch: events on a clock the calls advance. Work on
    another stream (pending_ms) reaches the clock when the device is synchronized, not
    when an event of the current stream is."""

    Tensor = Tensor
    float64, int64, int32 = "float64", "int64", "int32"

    def __init__(self):
        self.now_ms = self.pending_ms = 0.0
        self.slowdown = 1.0  # what a call's cost is multiplied by at the moment
        torch = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = torch.now_ms

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.at - self.at

        class Cuda:
            @staticmethod
            def synchronize():
                torch.now_ms, torch.pending_ms = torch.now_ms + torch.pending_ms, 0.0

        Cuda.Event = Event
        self.cuda = Cuda

    def tensor(self, values, device=None, dtype=None):
        t = Tensor(values=values)
        t.dtype = dtype
        return t


class Dist:
    """One rank's view of the process group; all_reduce(MAX) of the rounds' times (a 2-D
    tensor) merges `other`, the rows another rank would bring (None: a world of one)."""

    class ReduceOp:
        MAX = "max"

    def __init__(self, other=None):
        self.other = other

    def barrier(self):
        pass

    def all_reduce(self, t, op=None):
        if self.other is None or op != self.ReduceOp.MAX or not isinstance(t.values[0], list):
            return
        t.values = [[max(a, b) for a, b in zip(row, orow)] for row, orow in zip(t.values, self.other)]


class GroupingDist(Dist):
    """A process group API with torch.distributed's own bookkeeping: every group it makes
    sits in its registry until destroyed; `synced` counts the syncs free() asked for."""

    class GroupMember:
        NON_GROUP_MEMBER = object()

    class Group:
        destroyed = False

    def __init__(self):
        super().__init__()
        self.registry, self.destroyed = {}, 0

    def new_group(self, ranks):
        if ranks == "not me":
            return self.GroupMember.NON_GROUP_MEMBER
        g = self.Group()
        self.registry[g] = ranks
        return g

    def destroy_process_group(self, g):
        g.destroyed = True
        del self.registry[g]
        self.destroyed += 1


def costly(torch, ms, log):
    """A call that takes `ms` on the clock, times the slowdown of the moment, and notes
    whether Python's collector was on while it ran."""

    def fn(*args):
        torch.now_ms += ms * torch.slowdown
        log.append(gc.isenabled())

    return fn


class InputGroups(unittest.TestCase):
    def test_a_tensor_as_large_as_three_l2s_is_timed_as_it_is(self):
        big = Tensor(300)
        groups = pkb_timing.input_groups(Torch(), (big, 7), l2_bytes=100)
        self.assertEqual(len(groups), 1)
        self.assertIs(groups[0][0], big)  # no clone: kforge's job holds both sides' inputs
        self.assertEqual(big.clones, 0)

    def test_a_small_tensor_is_cloned_into_groups_that_cover_three_l2s(self):
        small = Tensor(10)
        groups = pkb_timing.input_groups(Torch(), (small, 7), l2_bytes=100)
        self.assertEqual(len(groups), 31)  # 3 * 100 // 10 + 1
        self.assertEqual(small.clones, 31)
        self.assertTrue(all(g[1] == 7 for g in groups))

    def test_no_tensor_argument_is_one_group(self):
        self.assertEqual(pkb_timing.input_groups(Torch(), (1, 2), l2_bytes=100), [(1, 2)])


class TimeAlternated(unittest.TestCase):
    def run_timing(self, dist, shifting_clocks=False, ref_ms=2.0, cand_ms=1.0):
        torch = Torch()
        log = []
        ref, cand = costly(torch, ref_ms, log), costly(torch, cand_ms, log)
        if shifting_clocks:  # each round (two blocks) slower than the last
            blocks = [0]
            real = pkb_timing.timed_block

            def shifting(*args):
                blocks[0] += 1
                torch.slowdown = 1.0 + 0.5 * ((blocks[0] - 1) // 2)
                return real(*args)

            pkb_timing.timed_block = shifting
        try:
            result = pkb_timing.time_alternated(torch, dist, "dev", (ref, [()]), (cand, [()]), warmup=3,
                                              iters=100, min_ms=0, rounds=10)
        finally:
            if shifting_clocks:
                pkb_timing.timed_block = real
        return result, log

    def test_paired_rounds_cancel_a_shift_of_the_clocks(self):
        (ref, cand, ratios, speedup, calls, _), _ = self.run_timing(Dist(), shifting_clocks=True)
        self.assertEqual(calls, 100)
        self.assertEqual(len(ratios), 10)
        for r in ratios:
            self.assertAlmostEqual(r, 2.0)
        self.assertAlmostEqual(speedup, 2.0)
        # The times are the medians of the rounds' means: between the slowest and fastest.
        self.assertTrue(2.0 < ref < 2.0 * 5.5)
        self.assertAlmostEqual(ref / cand, 2.0)

    def test_work_left_running_on_a_stream_of_its_own_is_timed(self):
        torch = Torch()

        def off_stream(*args):  # 1 ms a call, launched on a side stream and not joined
            torch.pending_ms += 1.0

        timing = pkb_timing.time_alternated(torch, Dist(), "dev", (costly(torch, 2.0, []), [()]),
                                            (off_stream, [()]), warmup=3, iters=100, min_ms=0, rounds=10)
        self.assertAlmostEqual(timing.speedup, 2.0)

    def test_the_slowest_rank_sets_each_round(self):
        # Another rank whose candidate took 4 ms a call in every round: the candidate's time
        # and every round's speedup are that rank's.
        other = [[1.0] * 10, [4.0] * 10]
        (ref, cand, ratios, speedup, _, _), _ = self.run_timing(Dist(other=other))
        self.assertAlmostEqual(ref, 2.0)
        self.assertAlmostEqual(cand, 4.0)
        self.assertAlmostEqual(speedup, 0.5)

    def test_the_collector_is_off_while_timing_and_on_afterwards(self):
        self.assertTrue(gc.isenabled())
        _, log = self.run_timing(Dist())
        timed = log[16:]  # after 3 + 3 warmup calls and 5 + 5 that size the trial
        self.assertTrue(timed)
        self.assertFalse(any(timed))
        self.assertTrue(gc.isenabled())


class WhoseCalls(unittest.TestCase):
    """A hang's report names the side whose calls ran: the phase file says it."""

    def test_every_switch_of_side_is_told_before_its_calls(self):
        torch, told, calls = Torch(), [], []

        def side(key):
            def fn(*args):
                calls.append((key, told[-1]))
                torch.now_ms += 1.0
            return fn

        pkb_timing.time_alternated(torch, Dist(), "dev", (side("ref"), [()]), (side("cand"), [()]), warmup=2,
                                   iters=8, min_ms=0, rounds=2, on_side=told.append)
        self.assertTrue(calls)
        self.assertTrue(all(key == last for key, last in calls))  # no call under the other's name
        # warmup, sizing, then the rounds (which goes first swapped each round)
        self.assertEqual(told, ["ref", "cand", "ref", "cand", "ref", "cand", "cand", "ref"])

    def test_the_phase_file_names_the_side_within_the_phase(self):
        with tempfile.TemporaryDirectory() as out:
            rep = pkb_eval.Report(out, 0, 1)
            rep.phase("time trial 2")
            rep.side("cand")
            with open(os.path.join(out, "rank0.phase")) as f:
                self.assertEqual(f.read(), "time trial 2 (the candidate's calls)")
            self.assertEqual(rep.data["timeline"][-1][0], "time trial 2")  # the timeline: phases only

    def test_an_exception_in_the_references_code_or_the_inputs_is_the_references(self):
        for side, status in (("ref", "reference"), ("inputs", "reference"), ("cand", "crash"), (None, "crash")):
            with tempfile.TemporaryDirectory() as out:
                rep = pkb_eval.Report(out, 0, 1)
                rep.phase("check trial 0")
                if side:
                    rep.side(side)
                rep.failed("RuntimeError: boom")
                with open(os.path.join(out, "rank0.json")) as f:
                    report = json.load(f)
                self.assertEqual(report["status"], status, side)
                self.assertEqual(report["message"], "in check trial 0: RuntimeError: boom")

    def test_a_new_phase_forgets_the_side(self):
        with tempfile.TemporaryDirectory() as out:
            rep = pkb_eval.Report(out, 0, 1)
            rep.phase("load reference")
            rep.side("ref")
            rep.phase("load candidate")
            rep.failed("ImportError")
            with open(os.path.join(out, "rank0.json")) as f:
                self.assertEqual(json.load(f)["status"], "crash")


class LateRank(Dist):
    """A world whose other rank's warmup time is always up (warm_up's int32 flag)."""

    def all_reduce(self, t, op=None):
        if getattr(t, "dtype", None) == "int32" and op == self.ReduceOp.MAX:
            t.values = [1]


class WarmUp(unittest.TestCase):
    """PKB's 500 warmup calls, or fewer where they would take longer than warmup_s."""

    def warmed(self, call_ms, warmup_s, dist=None):
        torch = Torch()
        timing = pkb_timing.time_alternated(torch, dist or Dist(), "dev", (costly(torch, call_ms, []), [()]),
                                            (costly(torch, call_ms / 2, []), [()]), warmup=500, iters=10,
                                            min_ms=0, rounds=2, warmup_s=warmup_s,
                                            clock=lambda: torch.now_ms / 1000)
        return timing.warmup

    def test_slow_calls_stop_at_the_first_look_past_the_time(self):
        # 112 ms calls (48_fsdp_and_tp's), looked at every 10: 50 calls reach 5.6 s; the
        # candidate's 56 ms ones take 90 calls to pass 5 s.
        self.assertEqual(self.warmed(112.0, 5.0), [50, 90])

    def test_fast_calls_make_all_of_pkbs_count(self):
        self.assertEqual(self.warmed(0.04, 5.0), [500, 500])

    def test_no_limit_makes_the_whole_count_however_slow(self):
        self.assertEqual(self.warmed(112.0, 0), [500, 500])

    def test_a_rank_whose_time_is_up_stops_every_rank(self):
        # Each call may be a collective: this rank stops where the other did.
        self.assertEqual(self.warmed(0.04, 5.0, LateRank()), [10, 10])

    def test_the_trial_says_a_cut_warm_up_and_nothing_of_a_whole_one(self):
        self.assertEqual(pkb_eval.short_warmup([50, 90], 500, 10.0),
                         "reference 50, candidate 90 of 500 calls, --warmup-s 10 reached")
        self.assertEqual(pkb_eval.short_warmup([500, 500], 500, 10.0), "")
        self.assertEqual(pkb_eval.short_warmup([10, 10], 10, 10.0), "")  # a later trial's few


class FreeingDroppedGroups(unittest.TestCase):
    """48_fsdp_and_tp makes two groups a call and drops them; a candidate may keep one."""

    def setUp(self):
        self.torch, self.dist = Torch(), GroupingDist()
        self.syncs = []
        self.dropped = pkb_timing.DroppedGroups(self.dist, lambda: self.syncs.append(len(self.dist.registry)))
        self.dropped.watch()
        self.live_at_call = []
        self.cache = {}

        def leaky():  # as 48's reference: new groups each call, none kept
            self.live_at_call.append(len(self.dist.registry))
            self.dist.new_group([0])
            self.dist.new_group("not me")
            self.dist.new_group([0])
            self.torch.now_ms += 1.0

        def cached():  # as a candidate that makes its group once
            if "g" not in self.cache:
                self.cache["g"] = self.dist.new_group([0])
            self.assertFalse(self.cache["g"].destroyed)
            self.torch.now_ms += 0.5

        self.leaky, self.cached = leaky, cached

    def test_groups_dropped_by_the_calls_are_destroyed_between_blocks_and_kept_ones_stay(self):
        pkb_timing.time_alternated(self.torch, self.dist, "dev", (self.leaky, [()]), (self.cached, [()]),
                                 warmup=50, iters=100, min_ms=0, rounds=10, dropped=self.dropped)
        self.assertEqual(len(self.dropped.made), 1)  # the candidate's, still in use
        self.assertEqual(list(self.dist.registry), [self.cache["g"]])
        self.assertEqual(self.dist.destroyed, 2 * (50 + 5 + 100))
        # In the warmup, what a call made is gone before the next; in a block of 10 calls the
        # groups pile up (none destroyed under the timing) and go after it.
        self.assertEqual(max(self.live_at_call[:50]), 0)
        self.assertEqual(max(self.live_at_call), 2 * 9 + 1)
        self.assertTrue(self.syncs)  # the device idle before each batch of destroys

    def test_a_kept_group_dropped_later_is_destroyed_then(self):
        self.cached()
        self.dropped.free()
        self.assertEqual(self.dist.destroyed, 0)
        self.cache.clear()
        self.dropped.free()
        self.assertEqual(self.dist.destroyed, 1)
        self.assertEqual(len(self.dropped.made), 0)

    def test_without_dropped_nothing_is_destroyed(self):
        pkb_timing.time_alternated(self.torch, self.dist, "dev", (self.leaky, [()]), (self.cached, [()]),
                                 warmup=5, iters=10, min_ms=0, rounds=2)
        self.assertEqual(self.dist.destroyed, 0)
        self.assertEqual(len(self.dist.registry), 2 * (5 + 5 + 10) + 1)


if __name__ == "__main__":
    unittest.main()
