// agent/budget.h: the solve loop's hard budgets. --max-tokens and --max-cost are
// checked before every model call against what the call could spend at most: the
// prompt (estimated conservatively) plus the reply's output cap, which is lowered to
// what is left, so that one call cannot overspend them. --max-wall is a deadline that
// cuts whatever runs when it passes (sandbox/deadline.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "llm/pricing.h"
#include "llm/provider.h"

namespace agent {

struct Limits {
  int64_t max_tokens = 0;  // input + output over the run; 0: none
  double max_cost_usd = 0;
  double max_wall_s = 0;
};

struct Spent {
  int64_t tokens = 0;  // input + output so far
  double cost_usd = 0;
  double seconds = 0;
};

// Which budget ended a run, and how much of it was spent.
struct BudgetEnd {
  std::string name;  // max_tokens | max_cost | max_wall; "" when none did
  double spent = 0, limit = 0;
  std::string note;  // why the next call could not be made, when that is the reason
  // "6,012 tokens of --max-tokens 6,000", "$0.0150 of --max-cost $0.015", ...
  std::string text() const;
};

// A conservative count of the tokens the messages make: one token per 3 bytes of
// content, rounded up (tokenizers average about 4 bytes a token on English and code).
int64_t estimate_prompt_tokens(const std::vector<llm::Message>& msgs);

// Before a call whose prompt is about prompt_tokens: false with *end when a budget
// leaves nothing for it. Otherwise *cap is the most output tokens the call may ask for
// (0: no budget limits it): what --max-tokens leaves after the prompt, and what
// --max-cost leaves after the prompt at the model's input price (or its cache-write
// price, when dearer), at its output price.
bool next_call_cap(const Limits& lim, const Spent& spent, int64_t prompt_tokens,
                   const llm::Price* price, int64_t* cap, BudgetEnd* end);

}  // namespace agent
