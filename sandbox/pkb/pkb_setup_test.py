#!/usr/bin/env python3
"""Tests of pkb_setup.py (whether this setup can run a PKB job) and of pkb_eval.py's
--probe, against stand-in torch modules and a checkout the tests write (no GPU, no torch
needed). Run by ctest (CMakeLists.txt)."""
import json
import os
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pkb_eval  # noqa: E402
import pkb_setup  # noqa: E402


def stand_in_torch(available, count):
    torch = types.ModuleType("torch")
    torch.__version__ = "9.9"
    torch.version = types.SimpleNamespace(cuda="13.0" if available else None)
    torch.cuda = types.SimpleNamespace(is_available=lambda: available, device_count=lambda: count)
    torch.distributed = types.ModuleType("torch.distributed")
    return torch


class CudaUnfit(unittest.TestCase):
    def test_no_cuda_says_what_torch_sees(self):
        why = pkb_setup.cuda_unfit(stand_in_torch(False, 0), 1)
        self.assertIn("torch 9.9 sees no CUDA device", why)
        self.assertIn("CUDA_VISIBLE_DEVICES", why)

    def test_more_ranks_than_gpus_says_which_world_fits(self):
        why = pkb_setup.cuda_unfit(stand_in_torch(True, 1), 2)
        self.assertIn("2 ranks need 2 GPUs", why)
        self.assertIn("pass --world 1", why)

    def test_enough_gpus_is_fit(self):
        self.assertIsNone(pkb_setup.cuda_unfit(stand_in_torch(True, 8), 8))


class Probe(unittest.TestCase):
    """pkb_eval.py --probe: the setup alone, into <out>/probe.json."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        os.makedirs(os.path.join(self.root, "utils"))
        with open(os.path.join(self.root, "utils", "input_output_tensors.py"), "w") as f:
            f.write("def create_input_tensor(*args, **kwargs):\n    return ()\n")
        self.saved = {k: sys.modules.get(k) for k in ("torch", "torch.distributed", "utils",
                                                      "utils.input_output_tensors")}

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        if self.root in sys.path:
            sys.path.remove(self.root)
        self.dir.cleanup()

    def probe(self, torch, nproc):
        sys.modules["torch"] = torch
        sys.modules["torch.distributed"] = torch.distributed if torch else None
        sys.modules.pop("utils", None)
        sys.modules.pop("utils.input_output_tensors", None)
        out = os.path.join(self.root, "out")
        argv = ["--pkb", self.root, "--problem-id", "1", "--reference", "r.py", "--solution", "s.py",
                "--out", out, "--nproc", str(nproc), "--probe"]
        self.assertEqual(pkb_eval.main(argv), 0)
        with open(os.path.join(out, "probe.json")) as f:
            return json.load(f)

    def test_a_setup_that_runs_the_job_is_ok(self):
        r = self.probe(stand_in_torch(True, 2), 2)
        self.assertEqual(r["status"], "ok")
        self.assertEqual(r["python"], sys.executable)

    def test_fewer_gpus_than_ranks_is_the_environment(self):
        r = self.probe(stand_in_torch(True, 1), 2)
        self.assertEqual(r["status"], "environment")
        self.assertIn("pass --world 1", r["message"])

    def test_no_torch_is_the_environment_with_python_s_message(self):
        r = self.probe(None, 1)  # None in sys.modules: `import torch` raises ImportError
        self.assertEqual(r["status"], "environment")
        self.assertTrue(r["message"].startswith("import torch: "), r["message"])

    def test_a_checkout_whose_utils_do_not_import_is_the_environment(self):
        with open(os.path.join(self.root, "utils", "input_output_tensors.py"), "w") as f:
            f.write("import numpy_that_is_not_here\n")
        r = self.probe(stand_in_torch(True, 1), 1)
        self.assertEqual(r["status"], "environment")
        self.assertIn("the checkout's utils/input_output_tensors.py: ModuleNotFoundError", r["message"])


if __name__ == "__main__":
    unittest.main()
