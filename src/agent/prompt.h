// agent/prompt.h: the first two messages of a run, from prompts/system.md and
// prompts/task.md: the ABI, the rules and the reply format; then the problem, its
// tensors at the sizes of this run, the baseline, a skeleton of the ABI (agent/skeleton.h),
// the roofline, the topology, the cost model's analysis and the primitives'
// documentation. Never a solution or an example kernel of any problem
// (prompt_leak_test.cpp checks every prompt the loop can send).
#pragma once

#include <string>

#include "agent/mode.h"
#include "eval/eval.h"
#include "suite/topology.h"

namespace agent {

struct PromptInputs {
  eval::EvalConfig eval;
  Mode mode = Mode::direct;
  double target = 1.0;
  suite::Topology topology;
  std::string baseline_time;  // a sentence: measured, or why not
  std::string prompts_dir;
};

bool build_system_prompt(const PromptInputs& in, std::string* out, std::string* err);
bool build_task_prompt(const PromptInputs& in, std::string* out, std::string* err);

// What the task prompt says about the primitives: primitives/docs/*.md on cuda, the
// header <kf/host.h> on the host backend.
bool primitives_text(const PromptInputs& in, std::string* out, std::string* err);

// primitives/docs/*.md, README.md first and choosing.md last.
bool primitives_docs(const std::string& docs_dir, std::string* out, std::string* err);

}  // namespace agent
