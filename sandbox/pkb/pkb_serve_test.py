#!/usr/bin/env python3
"""Tests of pkb_serve.py's pure parts: which paths a child may read around the hidden
folders, that the leftovers of an eval (in a session of their own) are found and
killed, and that a driver without the ranks' confinement hook is not served. The server end to end is tested from C++ (src/pkb/warm_test.cpp). Run by ctest."""
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pkb_serve  # noqa: E402


class ReadableBeside(unittest.TestCase):
    def test_everything_but_the_hidden_folders(self):
        with tempfile.TemporaryDirectory() as d:
            d = os.path.realpath(d)
            for p in ("a/x", "a/hidden/inner", "b", "c/ext/k1", "c/ext/k2"):
                os.makedirs(os.path.join(d, p))
            got = pkb_serve.readable_beside(d, [d + "/a/hidden", d + "/c/ext"])
            self.assertEqual(sorted(got), [d + "/a/x", d + "/b"])

    def test_a_root_with_nothing_hidden_is_whole(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(pkb_serve.readable_beside(d, ["/elsewhere"]), [os.path.realpath(d)])

    def test_a_hidden_root_gives_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(pkb_serve.readable_beside(d, [os.path.realpath(d)]), [])


class Leftovers(unittest.TestCase):
    def test_a_grandchild_in_its_own_session_is_killed(self):
        pid = os.fork()
        if pid == 0:  # the eval's child: starts a sleeper in a session of its own and exits
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
            os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.2)
        self.assertTrue(pkb_serve.descendants(), "the orphan came back to its subreaper")
        pkb_serve.kill_leftovers()
        self.assertEqual(pkb_serve.descendants(), [])


class DriverWithoutConfine(unittest.TestCase):
    def test_a_driver_without_the_hook_is_not_served(self):
        # In a process of its own: main() sets the server's process attributes.
        with tempfile.TemporaryDirectory() as d:
            driver = os.path.join(d, "driver.py")
            with open(driver, "w") as f:
                f.write("def main(argv):\n    return 0\n")
            r = subprocess.run([sys.executable, pkb_serve.__file__, "--ctl", d, "--pkb", d, "--driver", driver],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 3, r.stderr)
            if "Landlock is not available" in r.stderr:
                self.skipTest("no Landlock in this kernel: the server stops before the driver")
            self.assertIn("has no CONFINE hook", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "requests")), "it served nothing")


if __name__ == "__main__":
    import ctypes
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER, as the server is
    unittest.main()
