// pkb/test_util.h: for the tests only, a PKB-shaped checkout they write themselves
// (87 tiny references with PKB's layout, not PKB's code), in a temporary folder.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "pkb/checkout.h"
#include "pkb/evaluate.h"
#include "sandbox/confine.h"

namespace pkb::test {

// A stand-in for kforge's driver (sandbox/pkb/pkb_eval.py) that a real python runs, as a
// job or in the warm interpreter: every rank's phase file, then the candidate module's body,
// then every rank's report, correct (the reference 2 ms, the candidate 1 ms), and the
// job's HOME in <out>/env.txt.
inline const char* kStandInDriver = R"(import argparse, json, os, runpy

CONFINE = None  # set by the warm interpreter; pkb_eval.py's ranks call it as this one does


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--nproc", type=int, default=1)
    p.add_argument("--solution")
    a, _ = p.parse_known_args(argv)
    os.makedirs(a.out, exist_ok=True)
    for r in range(a.nproc):
        with open(os.path.join(a.out, "rank%d.phase" % r), "w") as f:
            f.write("load candidate")
    if CONFINE is not None:
        CONFINE()
    runpy.run_path(a.solution)
    with open(os.path.join(a.out, "env.txt"), "w") as f:
        f.write(os.environ.get("HOME", ""))
    for r in range(a.nproc):
        with open(os.path.join(a.out, "rank%d.json" % r), "w") as f:
            json.dump({"rank": r, "status": "correct", "phase": "time trial 1", "trials": [
                {"trial": 0, "ref_ms": 2.0, "cand_ms": 1.0}, {"trial": 1, "ref_ms": 2.0, "cand_ms": 1.0}]}, f)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv[1:]))
)";

struct FakeCheckout {
  std::string root;
  FakeCheckout() {
    char tmpl[] = "/tmp/kf_pkb_XXXXXX";
    const char* p = mkdtemp(tmpl);
    root = p ? p : "";
    namespace fs = std::filesystem;
    for (auto d : {"reference", "scripts", "utils", "kernelgen"})
      fs::create_directories(root + "/" + d);
    write("run_local.py", "# stand-in for PKB's launcher\n");
    write("scripts/worker.py", "# stand-in for PKB's worker\n");
    std::string inputs =
        "def create_input_tensor(rank, world_size, problem_id, base_shape, dtype, trial=0, "
        "device=None):\n";
    inputs += "    M, N = base_shape\n";
    for (int n = 1; n <= 87; ++n) {
      write("reference/" + name(n) + ".py",
            "import torch\nimport torch.distributed as dist\n\n\n@torch.no_grad()\n"
            "def solution(tensor: torch.Tensor, scale_" +
                std::to_string(n) +
                ": float = 1.0) -> torch.Tensor:\n    out = tensor.clone()\n    "
                "dist.all_reduce(out)\n    return out\n");
      inputs += std::string(n == 1 ? "    if" : "    elif") +
                " problem_id == " + std::to_string(n) + ":\n        x = torch.randn(M, N + " +
                std::to_string(n) + ", dtype=dtype, device=device)\n" + "        return (x,)\n";
    }
    inputs += "    raise ValueError(problem_id)\n";
    write("utils/input_output_tensors.py", inputs);
    write("reference/fix_py_indexing.sh", "#!/bin/sh\n");
  }
  ~FakeCheckout() {
    std::error_code ec;
    if (!root.empty()) std::filesystem::remove_all(root, ec);
  }
  FakeCheckout(const FakeCheckout&) = delete;
  FakeCheckout& operator=(const FakeCheckout&) = delete;
  static std::string name(int n) { return std::to_string(n) + "_op" + std::to_string(n); }
  void write(const std::string& rel, const std::string& text) const {
    std::ofstream(root + "/" + rel) << text;
  }
};

// A candidate module at `path`: `body`, then an identity solution(x).
inline void write_candidate(const std::string& path, const std::string& body) {
  std::ofstream(path) << body << "\ndef solution(x):\n    return x\n";
}

// A spec for f's problem 16 that the stand-in driver (written into f) runs under Debian's
// python3 (a pyenv shim is a script a jail cannot run), confined where this machine
// confines; false (with *err) where f is not a checkout.
inline bool stand_in_spec(const FakeCheckout& f, EvalSpec* spec, std::string* err) {
  Checkout c;
  if (!open_checkout(f.root, &c, err) || !find_problem(c, "16", &spec->problem, err)) return false;
  spec->checkout = c.root;
  spec->ext_cache = f.root + "/ext";
  std::filesystem::create_directories(f.root + "/driver");
  f.write("driver/pkb_eval.py", kStandInDriver);
  spec->driver = f.root + "/driver/pkb_eval.py";
  std::error_code ec;
  spec->python = std::filesystem::canonical("/usr/bin/python3", ec).string();
  spec->confine = sandbox::isolation_mode() == sandbox::Isolation::bwrap;
  spec->timeout_s = 30;
  return true;
}

}  // namespace pkb::test
