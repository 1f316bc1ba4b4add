// pkb/test_util.h: for the tests only, a PKB-shaped checkout they write themselves
// (87 tiny references with PKB's layout, not PKB's code), in a temporary folder.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace pkb::test {

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

}  // namespace pkb::test
