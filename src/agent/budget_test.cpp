// The budgets' arithmetic: the prompt estimate and the output cap each budget leaves.
#include "agent/budget.h"

#include <doctest/doctest.h>

using agent::BudgetEnd;

using agent::Spent;

TEST_CASE("budget: the prompt estimate is one token per 3 bytes, rounded up") {
  CHECK(agent::estimate_prompt_tokens({}) == 0);
  CHECK(agent::estimate_prompt_tokens({{"system", "abc"}, {"user", "d"}}) == 2);
  CHECK(agent::estimate_prompt_tokens({{"user", std::string(3000, 'x')}}) == 1000);
}

TEST_CASE("budget: --max-tokens caps the reply at what is left after the prompt") {
  agent::Limits lim;
  lim.max_tokens = 6000;
  int64_t cap = -1;
  BudgetEnd end;
  REQUIRE(agent::next_call_cap(lim, Spent{1000, 0, 0}, 2000, nullptr, &cap, &end));
  CHECK(cap == 3000);
  CHECK_FALSE(agent::next_call_cap(lim, Spent{4000, 0, 0}, 2000, nullptr, &cap, &end));
  CHECK(end.name == "max_tokens");
  CHECK(end.text().find("4,000 tokens of --max-tokens 6,000") != std::string::npos);
  CHECK(end.text().find("would not fit") != std::string::npos);
  // No budget: no cap.
  REQUIRE(
      agent::next_call_cap(agent::Limits{}, Spent{1 << 20, 99, 99}, 1 << 20, nullptr, &cap, &end));
  CHECK(cap == 0);
}

TEST_CASE("budget: --max-cost caps the reply at the output price; no price, no cap") {
  agent::Limits lim;
  lim.max_cost_usd = 0.015;
  llm::Price p{1.0, 10.0, -1, -1};  // USD per million tokens
  int64_t cap = -1;
  BudgetEnd end;
  // $0.005 left after $0.01 spent and 1000 prompt tokens ($0.001): $0.004 / $10/M = 400.
  REQUIRE(agent::next_call_cap(lim, Spent{0, 0.01, 0}, 1000, &p, &cap, &end));
  CHECK(cap == 400);
  REQUIRE(agent::next_call_cap(lim, Spent{0, 0.01, 0}, 1000, nullptr, &cap, &end));
  CHECK(cap == 0);
  CHECK_FALSE(agent::next_call_cap(lim, Spent{0, 0.0149, 0}, 1000, &p, &cap, &end));
  CHECK(end.name == "max_cost");
  CHECK_FALSE(agent::next_call_cap(lim, Spent{0, 0.02, 0}, 0, nullptr, &cap, &end));
  CHECK(end.text().find("$0.0200 of --max-cost $0.015") != std::string::npos);
  // A cache write dearer than input (Anthropic: 1.25x) bounds the prompt's price: 1000
  // tokens at $2/M leave $0.003, 300 tokens.
  llm::Price cached{1.0, 10.0, 0.1, 2.0};
  REQUIRE(agent::next_call_cap(lim, Spent{0, 0.01, 0}, 1000, &cached, &cap, &end));
  CHECK(cap == 300);
  // Both: the lower wins.
  lim.max_tokens = 1300;
  REQUIRE(agent::next_call_cap(lim, Spent{0, 0.01, 0}, 1000, &p, &cap, &end));
  CHECK(cap == 300);
}

TEST_CASE("budget: --max-wall spent ends the run before a call") {
  agent::Limits lim;
  lim.max_wall_s = 4;
  int64_t cap = 0;
  BudgetEnd end;
  CHECK(agent::next_call_cap(lim, Spent{0, 0, 3.9}, 0, nullptr, &cap, &end));
  CHECK_FALSE(agent::next_call_cap(lim, Spent{0, 0, 4.0}, 0, nullptr, &cap, &end));
  CHECK(end.name == "max_wall");
  CHECK(end.text() == "4.0 s of --max-wall 4 s");
}
