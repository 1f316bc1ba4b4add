// agent/prompt.h: the first two messages of a run, from prompts/system.md and
// prompts/task.md: the ABI, the rules and the reply format; then the problem, its
// tensors at the sizes of this run, the baseline, the roofline, the topology, the cost
// model's analysis and the primitives' documentation.
#pragma once

#include <string>

#include "agent/eval.h"
#include "suite/topology.h"

namespace agent {

struct PromptInputs {
  EvalConfig eval;
  std::string mode = "direct";  // direct | agent
  double target = 1.0;
  suite::Topology topology;
  std::string baseline_time;  // a sentence: measured, or why not
  std::string prompts_dir;
};

bool build_system_prompt(const PromptInputs& in, std::string* out, std::string* err);
bool build_task_prompt(const PromptInputs& in, std::string* out, std::string* err);

// primitives/docs/*.md, README.md first and choosing.md last.
bool primitives_docs(const std::string& docs_dir, std::string* out, std::string* err);

}  // namespace agent
