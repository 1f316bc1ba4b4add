#include "agent/prompt.h"

#include <doctest/doctest.h>

#include "agent/template.h"
#include "suite/paths.h"
#include "tests/has.h"

namespace {

agent::PromptInputs inputs(const std::string& backend) {
  agent::PromptInputs in;
  std::string err;
  in.eval.paths = suite::default_paths();
  REQUIRE(suite::load_problem(in.eval.paths.problems_dir + "/all_reduce", &in.eval.problem, &err));
  REQUIRE(sandbox::parse_enum(backend, &in.eval.settings.backend));
  in.eval.settings.world = 4;
  in.eval.machine = suite::default_h200();
  in.prompts_dir = agent::default_prompts_dir();
  in.topology = suite::host_topology();
  in.baseline_time = "BASELINE-TIME-SENTENCE";
  in.target = 1.25;
  return in;
}

}  // namespace

TEST_CASE("prompt: cuda task carries tensors at both sizes, baseline, roofline, docs in order") {
  auto in = inputs("cuda");
  std::string sys, task, err;
  REQUIRE_MESSAGE(agent::build_system_prompt(in, &sys, &err), err);
  REQUIRE_MESSAGE(agent::build_task_prompt(in, &task, &err), err);
  CHECK(has(sys, "struct Comm"));  // the ABI verbatim
  CHECK(has(sys, "```cuda"));
  CHECK(has(task,
            "- x (input, fp32): [4099] on every rank at small; [1048576] on every rank at full"));
  CHECK(has(task, "ncclAllReduce"));
  CHECK(has(task, "n=1048576"));  // whole numbers as integers, never 1.04858e+06
  CHECK_FALSE(has(task, "e+06"));
  CHECK(has(task, "BASELINE-TIME-SENTENCE"));
  CHECK(has(task, "No kernel can beat"));
  CHECK(has(task, "speedup >= 1.25"));
  size_t readme = task.find("### README.md"), choosing = task.find("### choosing.md"),
         sig = task.find("### signals.md");
  REQUIRE(readme != std::string::npos);
  REQUIRE(choosing != std::string::npos);
  CHECK(readme < sig);
  CHECK(sig < choosing);
}

TEST_CASE("prompt: host task shows the host pattern instead of the CUDA primitives; agent format") {
  auto in = inputs("host");
  in.mode = agent::Mode::agent;
  std::string sys, task, err;
  REQUIRE(agent::build_system_prompt(in, &sys, &err));
  REQUIRE(agent::build_task_prompt(in, &task, &err));
  CHECK(has(sys, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"));
  CHECK(has(sys, "host backend"));
  CHECK(has(task, "cannot be used on the host backend"));
  CHECK(has(task, "class Barrier"));       // <kf/host.h> verbatim
  CHECK(has(task, "#include <kf/kf.h>"));  // the host skeleton
  CHECK_FALSE(has(task, "examples/"));
  CHECK_FALSE(has(task, "### README.md"));
  CHECK(has(task, "no speedup can be measured"));
}

TEST_CASE("prompt: host prompts carry no NVLink, GPU cost model or CUDA-only rule") {
  for (agent::Mode mode : {agent::Mode::direct, agent::Mode::agent}) {
    auto in = inputs("host");
    in.mode = mode;
    std::string sys, task, err;
    REQUIRE_MESSAGE(agent::build_system_prompt(in, &sys, &err), err);
    REQUIRE_MESSAGE(agent::build_task_prompt(in, &task, &err), err);
    for (const std::string& s : {sys, task}) {
      CHECK_FALSE(has(s, "NVLink"));
      CHECK_FALSE(has(s, "cuMulticast"));
      CHECK_FALSE(has(s, "TMA"));
      CHECK_FALSE(has(s, "HBM"));
      CHECK_FALSE(has(s, "Predicted (cost model"));
      CHECK_FALSE(has(s, "No kernel can beat"));
    }
    // What does apply: the bytes to move and why there is no speed to aim at.
    CHECK(has(task, "to exchange between ranks"));
    CHECK(has(task, "measures no speed"));
  }
  // The CUDA prompts keep all of it.
  auto in = inputs("cuda");
  std::string sys, task, err;
  REQUIRE_MESSAGE(agent::build_system_prompt(in, &sys, &err), err);
  REQUIRE_MESSAGE(agent::build_task_prompt(in, &task, &err), err);
  CHECK(has(sys, "cuMulticast"));
  CHECK(has(sys, "comm.stream()"));
  CHECK(has(task, "NVLink"));
  CHECK(has(task, "No kernel can beat"));
}

TEST_CASE("prompt: integer parameters are printed as integers") {
  auto in = inputs("cuda");
  std::string task, err;
  REQUIRE_MESSAGE(agent::build_task_prompt(in, &task, &err), err);
  CHECK(has(task, "n=1048576"));
  CHECK_FALSE(has(task, "e+06"));
}
