// pkb/solve.h: a PKB problem as the solve loop's foreign suite (agent/loop.h): PKB's
// problem in kforge's prompt (pkb/prompt.h), a Python module in PKB's solution format as
// the candidate, and kforge's PKB evaluator (pkb/evaluate.h) as the judge, each candidate
// in a fresh folder under the runs' evals/.
#pragma once

#include <string>

#include "agent/loop.h"
#include "agent/reply.h"
#include "pkb/evaluate.h"
#include "pkb/prompt.h"

namespace pkb {

struct SolveSpec {
  Checkout checkout;
  EvalSpec eval;  // the options every candidate is judged with; solution and work_dir per turn
  PromptOptions prompt;
  std::string prompts_dir;  // the PKB prompts (prompts/pkb), for the system prompt
  std::string evals_dir;    // where each candidate's folder is made
  bool warm = true;         // the candidates through one warm interpreter (pkb/warm.h)
};

// The candidate in a reply: the last ```python (or py, or untagged) block that defines a
// top-level `def solution(`; else a message saying what is wrong and what the format is.
agent::ParsedReply parse_solution_reply(const std::string& text);

// The foreign suite for spec. False (with *err naming the file) when the prompt cannot
// be built from the checkout.
bool make_foreign_suite(const SolveSpec& spec, agent::ForeignSuite* out, std::string* err);

}  // namespace pkb
