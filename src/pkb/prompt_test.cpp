// pkb/prompt_test.cpp: the prompt of a PKB-shaped checkout's problems.
#include "pkb/prompt.h"

#include <doctest/doctest.h>

#include "pkb/test_util.h"

TEST_CASE("pkb prompt: the signature, across lines and with a return annotation") {
  CHECK(pkb::solution_signature(
            "import torch\n\ndef solution(x: torch.Tensor) -> torch.Tensor:\n  return x\n") ==
        "def solution(x: torch.Tensor) -> torch.Tensor:");
  CHECK(
      pkb::solution_signature("def solution(\n    a,\n    b: dict[str, int] = {},\n):\n  pass\n") ==
      "def solution(\n    a,\n    b: dict[str, int] = {},\n):");
  CHECK(pkb::solution_signature("    def solution(x):\n") == "");  // not top level
  CHECK(pkb::solution_signature("def helper(x):\n  pass\n") == "");
}

TEST_CASE("pkb prompt: the input branch, by == and by in [...]") {
  std::string src =
      "def create_input_tensor(rank, world_size, problem_id, base_shape, dtype):\n"
      "    if problem_id in [1, 2, 3, 6]:\n        return (torch.randn(4),)\n"
      "    elif problem_id == 4:\n        x = 1\n\n        return (x,)\n"
      "    elif problem_id == 44:\n        return ()\n    raise ValueError\n";
  CHECK(pkb::input_description(src, 2) ==
        "    if problem_id in [1, 2, 3, 6]:\n        return (torch.randn(4),)\n");
  CHECK(pkb::input_description(src, 4) ==
        "    elif problem_id == 4:\n        x = 1\n\n        return (x,)\n");
  CHECK(pkb::input_description(src, 44) == "    elif problem_id == 44:\n        return ()\n");
  CHECK(pkb::input_description(src, 5) == "");
}

TEST_CASE("pkb prompt: every problem of the checkout has its prompt") {
  pkb::test::FakeCheckout f;
  pkb::Checkout c;
  std::string err;
  REQUIRE(pkb::open_checkout(f.root, &c, &err));
  pkb::PromptOptions o;
  o.world = 4;
  o.topology = "4x H200, NVLink between every pair";
  o.docs = "# kf primitives\nsignals and peer stores\n";
  for (auto& p : c.problems) {
    std::string text;
    REQUIRE_MESSAGE(pkb::build_prompt(c, p, o, &text, &err), err);
    std::string n = std::to_string(p.number);
    CHECK(text.find("def solution(tensor: torch.Tensor, scale_" + n +
                    ": float = 1.0) -> torch.Tensor:") != std::string::npos);
    CHECK(text.find("problem_id == " + n + ":\n        x = torch.randn(M, N + " + n + ",") !=
          std::string::npos);
    CHECK(text.find("dist.all_reduce(out)") != std::string::npos);
  }
  std::string text;
  REQUIRE(pkb::build_prompt(c, c.problems[0], o, &text, &err));
  CHECK(text.find("world size 4: 4x H200") != std::string::npos);
  CHECK(text.find("# kf primitives\nsignals and peer stores\n") != std::string::npos);
  o.docs.clear();  // no CUDA section without the docs
  REQUIRE(pkb::build_prompt(c, c.problems[0], o, &text, &err));
  CHECK(text.find("## CUDA") == std::string::npos);
  CHECK(text.find("run_local.py") != std::string::npos);
  CHECK(text.find("problem_id == 2:") == std::string::npos);  // only its own branch
  f.write("reference/5_op5.py", "x = 1\n");
  CHECK_FALSE(pkb::build_prompt(c, c.problems[4], o, &text, &err));
  CHECK(err.find("5_op5.py") != std::string::npos);
}
