#!/usr/bin/env python3
"""Tests of a PKB job's ranks as pkb_eval.py runs them: the processes its launch() starts
and waits for (pkb_ranks.py), and the confinement hook kforge's warm interpreter sets
(pkb_eval.CONFINE), against pkb_eval_test.py's stand-in torch. Run by ctest."""
import json
import os
import signal
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pkb_eval  # noqa: E402
import pkb_ranks  # noqa: E402
from pkb_eval_test import Dist, Torch  # noqa: E402


def fork_rank(body):
    """A child process that runs body() and exits with its return value."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = body()
        finally:
            os._exit(code)
    return pid


class WaitRanks(unittest.TestCase):
    def test_ranks_that_all_succeed_give_zero(self):
        pids = {fork_rank(lambda: 0): r for r in range(3)}
        self.assertEqual(pkb_ranks.wait_ranks(pids), 0)

    def test_a_failed_rank_gives_its_code_and_its_waiting_peer_is_killed(self):
        sleeper = fork_rank(lambda: time.sleep(600) or 0)
        failed = fork_rank(lambda: 3)
        self.assertEqual(pkb_ranks.wait_ranks({sleeper: 0, failed: 1}, grace_s=0.1), 3)
        with self.assertRaises(ProcessLookupError):  # killed and reaped, not left behind
            os.kill(sleeper, 0)

    def test_a_rank_ended_by_a_signal_gives_128_plus_it(self):
        victim = fork_rank(lambda: os.kill(os.getpid(), signal.SIGSEGV) or 0)
        self.assertEqual(pkb_ranks.wait_ranks({victim: 0}), 128 + signal.SIGSEGV)

    def test_each_rank_gets_torchruns_variables(self):
        env = pkb_ranks.rank_environment(2, 4, 29500)
        self.assertEqual((env["RANK"], env["LOCAL_RANK"], env["WORLD_SIZE"], env["MASTER_PORT"]),
                         ("2", "2", "4", "29500"))


class Confinement(unittest.TestCase):
    """pkb_eval.CONFINE, as kforge's warm interpreter sets it: called by a rank once it is
    up, and a rank that cannot be confined stops as the environment's failure."""

    def confine_with(self, fn):
        self.addCleanup(setattr, pkb_eval, "CONFINE", pkb_eval.CONFINE)
        pkb_eval.CONFINE = fn

    def test_a_cold_job_has_nothing_to_call(self):
        with tempfile.TemporaryDirectory() as out:
            rep = pkb_eval.Report(out, 0, 1)
            rep.phase("init process group")
            self.assertTrue(pkb_eval.confined(Torch(), Dist(), None, rep))
            self.assertEqual(rep.data["phase"], "init process group")

    def test_a_warm_rank_is_confined_and_goes_on(self):
        calls = []
        self.confine_with(lambda: calls.append(1))
        with tempfile.TemporaryDirectory() as out:
            rep = pkb_eval.Report(out, 0, 1)
            self.assertTrue(pkb_eval.confined(Torch(), Dist(), None, rep))
            self.assertEqual(calls, [1])
            self.assertEqual(rep.data["phase"], "confine")

    def test_a_rank_that_cannot_be_confined_stops_as_the_environment(self):
        def refuse():
            raise OSError(38, "Landlock is not available in this kernel")

        self.confine_with(refuse)
        with tempfile.TemporaryDirectory() as out:
            rep = pkb_eval.Report(out, 0, 1)
            self.assertFalse(pkb_eval.confined(Torch(), Dist(), None, rep))
            with open(os.path.join(out, "rank0.json")) as f:
                report = json.load(f)
            self.assertEqual(report["status"], "environment")
            self.assertIn("cannot confine this rank", report["message"])
            self.assertIn("Landlock is not available", report["message"])


if __name__ == "__main__":
    unittest.main()
