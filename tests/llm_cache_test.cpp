// Prompt caching against the loopback fake_llm_server, which reports the usage the real
// APIs' caches give (tests/fake_llm/prompt_cache.h): Anthropic requests carry
// cache_control, the second turn reads what the first wrote and costs less though it
// sends more; OpenAI's automatic cache finds the shared prefix and prices it as cached.
#include <doctest/doctest.h>

#include "tests/fake_llm/fixtures.h"

using nlohmann::json;

namespace {

// Two turns of a conversation whose stable prefix (system + task) is long enough to be
// cached (1024 tokens at least): 12 KB of system prompt, 4 KB of task.
llm::Request turn(int n) {
  llm::Request r;
  r.messages = {{"system", std::string(12000, 's')}, {"user", std::string(4000, 't')}};
  if (n >= 2) r.messages.insert(r.messages.end(), {{"assistant", "kernel 1"}, {"user", "fb 1"}});
  return r;
}

bool call(llm::Provider& p, const llm::Request& q, llm::Reply* r) {
  llm::Error e;
  bool ok = p.complete(q, r, &e);
  INFO(e.message);
  CHECK(ok);
  return ok;
}

}  // namespace

TEST_CASE("llm cache: anthropic: cache_control on the prefix; turn 2 reads it and costs less") {
  fake_llm::Server s;
  json step = {{"cache", true}, {"body", fake_llm::anthropic_body("k")}};
  std::string err;
  REQUIRE_MESSAGE(s.start(json::array({step, step}), &err), err);
  auto st = fake_llm::setup(s, "anthropic");
  auto p = llm::make_provider(st.cfg, &err);
  REQUIRE_MESSAGE(p, err);
  llm::Reply r1, r2;
  REQUIRE(call(*p, turn(1), &r1));
  REQUIRE(call(*p, turn(2), &r2));
  auto reqs = s.requests();
  REQUIRE(reqs.size() == 2);
  json eph = {{"type", "ephemeral"}};
  for (const json& q : reqs) {
    CHECK(q["body"]["system"][0]["cache_control"] == eph);
    CHECK(q["body"]["messages"][0]["content"][0]["cache_control"] == eph);
  }
  CHECK(reqs[1]["body"]["messages"][2]["content"][0]["cache_control"] == eph);
  // Turn 1 writes its whole prompt (both breakpoints' prefixes), reads nothing.
  CHECK(r1.usage.cache_read_tokens == 0);
  CHECK(r1.usage.cache_write_tokens > 4000);
  CHECK(r1.usage.input_tokens == r1.usage.cache_write_tokens);  // all of it, as kforge counts
  // Turn 2 reads exactly what turn 1 wrote and writes only what it added.
  CHECK(r2.usage.cache_read_tokens == r1.usage.cache_write_tokens);
  CHECK(r2.usage.cache_write_tokens > 0);
  CHECK(r2.usage.cache_write_tokens < 20);
  CHECK(r2.usage.input_tokens > r1.usage.input_tokens);
  // Priced as such (claude-test: input 3, cache read 0.3, cache write 3.75, output 15).
  auto cost = [](const llm::Usage& u) {
    int64_t plain = u.input_tokens - u.cache_read_tokens - u.cache_write_tokens;
    return (plain * 3.0 + u.cache_read_tokens * 0.3 + u.cache_write_tokens * 3.75 +
            u.output_tokens * 15.0) /
           1e6;
  };
  CHECK(r1.cost_usd == doctest::Approx(cost(r1.usage)));
  CHECK(r2.cost_usd == doctest::Approx(cost(r2.usage)));
  CHECK(r2.cost_usd < r1.cost_usd / 3);  // more tokens sent, a third of the price or less
  CHECK(s.wait_exit(5) == 0);
}

TEST_CASE("llm cache: anthropic with prompt_cache off: no cache_control, nothing cached") {
  fake_llm::Server s;
  json step = {{"cache", true}, {"body", fake_llm::anthropic_body("k")}};
  std::string err;
  REQUIRE_MESSAGE(s.start(json::array({step, step}), &err), err);
  auto st = fake_llm::setup(s, "anthropic");
  st.cfg.prompt_cache = false;
  auto p = llm::make_provider(st.cfg, &err);
  REQUIRE_MESSAGE(p, err);
  llm::Reply r1, r2;
  REQUIRE(call(*p, turn(1), &r1));
  REQUIRE(call(*p, turn(2), &r2));
  CHECK(s.requests()[1]["body"]["system"].is_string());
  CHECK(r2.usage.cache_read_tokens == 0);
  CHECK(r2.usage.cache_write_tokens == 0);
  CHECK(r2.cost_usd > r1.cost_usd);
}

TEST_CASE("llm cache: openai: the shared prefix is reported cached and priced as such") {
  fake_llm::Server s;
  json step = {{"cache", true}, {"body", fake_llm::openai_body("k", 0, 30)}};
  std::string err;
  REQUIRE_MESSAGE(s.start(json::array({step, step}), &err), err);
  auto st = fake_llm::setup(s, "openai");
  auto p = llm::make_provider(st.cfg, &err);
  REQUIRE_MESSAGE(p, err);
  llm::Reply r1, r2;
  REQUIRE(call(*p, turn(1), &r1));
  REQUIRE(call(*p, turn(2), &r2));
  CHECK(r1.usage.cache_read_tokens == 0);
  // All of turn 1's prompt is shared (16014 bytes with the role marks: 4003 tokens),
  // cached from 1024 tokens in steps of 128: 1024 + 23 * 128.
  CHECK(r2.usage.cache_read_tokens == 3968);
  CHECK(r2.usage.input_tokens > r1.usage.input_tokens);
  // gpt-test: input 2, cache read 0.5, output 10.
  const llm::Usage& u = r2.usage;
  CHECK(r2.cost_usd == doctest::Approx(((u.input_tokens - u.cache_read_tokens) * 2.0 +
                                        u.cache_read_tokens * 0.5 + u.output_tokens * 10.0) /
                                       1e6));
  CHECK(r2.cost_usd < r1.cost_usd);
}
