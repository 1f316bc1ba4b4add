// agent/budget.cpp: see budget.h.
#include "agent/budget.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sandbox/text.h"

namespace agent {

std::string BudgetEnd::text() const {
  std::string s;
  if (name == "max_tokens")
    s = fmt::format("{} tokens of --max-tokens {}",
                    sandbox::group_digits(static_cast<int64_t>(spent)),
                    sandbox::group_digits(static_cast<int64_t>(limit)));
  else if (name == "max_cost")
    s = fmt::format("${:.4f} of --max-cost ${:g}", spent, limit);
  else if (name == "max_wall")
    s = fmt::format("{:.1f} s of --max-wall {:g} s", spent, limit);
  return note.empty() ? s : s + "; " + note;
}

int64_t estimate_prompt_tokens(const std::vector<llm::Message>& msgs) {
  int64_t bytes = 0;
  for (const llm::Message& m : msgs) bytes += static_cast<int64_t>(m.content.size());
  return (bytes + 2) / 3;
}

bool next_call_cap(const Limits& lim, const Spent& spent, int64_t prompt_tokens,
                   const llm::Price* price, int64_t* cap, BudgetEnd* end) {
  *cap = 0;
  auto lower = [&](int64_t c) { *cap = *cap == 0 ? c : std::min(*cap, c); };
  if (lim.max_tokens > 0) {
    int64_t left = lim.max_tokens - spent.tokens - prompt_tokens;
    if (left < 1) {
      *end = {"max_tokens", static_cast<double>(spent.tokens), static_cast<double>(lim.max_tokens),
              spent.tokens < lim.max_tokens
                  ? fmt::format("the next prompt (about {} tokens) would not fit",
                                sandbox::group_digits(prompt_tokens))
                  : ""};
      return false;
    }
    lower(left);
  }
  if (lim.max_cost_usd > 0) {
    bool spent_all = spent.cost_usd >= lim.max_cost_usd;
    int64_t out = 0;
    if (!spent_all && price && price->output > 0) {
      // A prompt token costs at most the input price or, where the provider's cache
      // writes it, the cache-write price (Anthropic: 1.25x): the dearer is the bound.
      double per_token = std::max(price->input, price->cache_write);
      double left_usd = lim.max_cost_usd - spent.cost_usd - prompt_tokens * per_token / 1e6;
      // A millionth of a token of slack, so that floating-point noise in an exact
      // amount (0.004 / 1e-5) does not lose a whole token.
      out = static_cast<int64_t>(std::floor(left_usd * 1e6 / price->output + 1e-6));
      if (out >= 1) lower(out);
    }
    if (spent_all || (price && price->output > 0 && out < 1)) {
      *end = {"max_cost", spent.cost_usd, lim.max_cost_usd,
              spent_all ? "" : "the next prompt and a reply would not fit"};
      return false;
    }
  }
  if (lim.max_wall_s > 0 && spent.seconds >= lim.max_wall_s) {
    *end = {"max_wall", spent.seconds, lim.max_wall_s, ""};
    return false;
  }
  return true;
}

}  // namespace agent
