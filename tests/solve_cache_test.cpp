// Prompt caching over whole `kforge solve` runs (the real binary, host backend, world 2)
// against fake_llm_server steps with "cache": true, which report the usage the real
// APIs' caches give: on Anthropic every request carries cache_control on the system
// prompt and the task, and the second turn, which sends more, reads the first turn's
// prompt from the cache and is priced lower; on OpenAI each turn's messages are byte for
// byte a prefix of the next turn's, so the server's automatic cache finds them. The run's
// totals, its trajectory and `kforge show` carry the cached tokens.
#include <doctest/doctest.h>
#include <fmt/core.h>

#include "tests/has.h"
#include "tests/solve_harness.h"

using namespace solve_test;

namespace {

// A price file for the test model, Anthropic's shape: cache reads 0.1x, writes 1.25x.
json priced(Harness& h) {
  std::string path = h.dir() + "/prices.json";
  std::ofstream(path) << R"({"models": {"test-model": {"input": 3, "output": 15,
                            "cache_read": 0.3, "cache_write": 3.75}}})";
  return {{"prices_file", path}};
}

// Two turns: a wrong kernel, then the right one; each step's usage comes from the cache.
json two_turns(const std::string& wire) {
  auto step = [&](const std::string& text) {
    json body =
        wire == "openai" ? fake_llm::openai_body(text, 0, 400) : fake_llm::anthropic_body(text);
    if (wire == "anthropic") body["usage"]["output_tokens"] = 400;
    return json{{"cache", true}, {"body", body}};
  };
  return json::array({step(fenced("cpp", wrong_kernel())), step(fenced("cpp", right_kernel()))});
}

const json& usage_of(const trace::Trajectory& t, size_t i) {
  return (*t.of_type(trace::EventType::reply).at(i))["usage"];
}

double cost_of(const trace::Trajectory& t, size_t i) {
  return (*t.of_type(trace::EventType::reply).at(i))["cost_usd"].get<double>();
}

}  // namespace

TEST_CASE(
    "solve cache: anthropic requests carry cache_control; turn 2 reads turn 1 and costs less") {
  Harness h;
  Result r = h.solve(two_turns("anthropic"), "anthropic", false, {}, priced(h));
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(verdict_statuses(r.run) == std::vector<std::string>{"mismatch", "correct"});
  REQUIRE(r.requests.size() == 2);
  json eph = {{"type", "ephemeral"}};
  for (const json& q : r.requests) {
    const json& b = q["body"];
    CHECK(b["system"][0]["cache_control"] == eph);
    CHECK(has(b["system"][0]["text"], "kf_run"));
    CHECK(b["messages"][0]["content"][0]["cache_control"] == eph);
    CHECK(has(b["messages"][0]["content"][0]["text"], "# Problem: all_reduce"));
  }
  // Turn 2: the conversation so far ends in a breakpoint too (the mismatch feedback).
  const json& m2 = r.requests[1]["body"]["messages"];
  REQUIRE(m2.size() == 3);
  CHECK(m2[2]["content"][0]["cache_control"] == eph);
  CHECK(has(m2[2]["content"][0]["text"], "Turn 1:"));
  // Turn 1 wrote the prefix; turn 2 read all of it and wrote only what it added.
  const json &u1 = usage_of(r.traj, 0), &u2 = usage_of(r.traj, 1);
  CHECK(u1["cache_read_tokens"] == 0);
  CHECK(u1["cache_write_tokens"].get<int64_t>() > 1024);
  CHECK(u2["cache_read_tokens"] == u1["cache_write_tokens"]);
  CHECK(u2["cache_write_tokens"].get<int64_t>() > 0);
  CHECK(u2["input_tokens"].get<int64_t>() > u1["input_tokens"].get<int64_t>());
  // Priced as such: turn 2 sends more and costs less than turn 1, exactly as priced.
  auto price = [](const json& u) {
    int64_t read = u["cache_read_tokens"], write = u["cache_write_tokens"];
    int64_t plain = u["input_tokens"].get<int64_t>() - read - write;
    return (plain * 3.0 + read * 0.3 + write * 3.75 + u["output_tokens"].get<int64_t>() * 15.0) /
           1e6;
  };
  CHECK(cost_of(r.traj, 0) == doctest::Approx(price(u1)));
  CHECK(cost_of(r.traj, 1) == doctest::Approx(price(u2)));
  CHECK(cost_of(r.traj, 1) < cost_of(r.traj, 0));
  // The run's totals: in the summary, in the result line and in `kforge show`.
  const json& sum = *r.traj.summary();
  CHECK(sum["tokens_cache_read"] == u2["cache_read_tokens"]);
  CHECK(sum["tokens_cache_write"].get<int64_t>() ==
        u1["cache_write_tokens"].get<int64_t>() + u2["cache_write_tokens"].get<int64_t>());
  CHECK(sum["cost_usd"].get<double>() == doctest::Approx(cost_of(r.traj, 0) + cost_of(r.traj, 1)));
  REQUIRE(r.result.is_object());
  CHECK(r.result["tokens_cache_read"] == sum["tokens_cache_read"]);
  std::string shown;
  CHECK(h.kforge({"show", r.trajectory_path}, &shown) == 0);
  CHECK(has(shown,
            fmt::format("{} read from the prompt cache", u2["cache_read_tokens"].get<int64_t>())));
  // Replayed as the model, the run records the same usage, cached parts included.
  std::string out;
  CHECK(h.kforge({"solve", "all_reduce", "--backend", "host", "--world", "2", "--size", "small",
                  "--no-time", "--headless", "--model", "replay:" + r.trajectory_path, "--out",
                  h.next_out_dir()},
                 &out) == 0);
  INFO(out);
  json result = json::parse(out.substr(out.rfind("{\"")), nullptr, false);
  REQUIRE(result.is_object());
  trace::Run again;
  std::string err;
  REQUIRE_MESSAGE(trace::read_run(result.value("trajectory", ""), &again, &err), err);
  REQUIRE(again.replies.size() == 2);
  CHECK(again.replies[0].cache_write_tokens == u1["cache_write_tokens"].get<int64_t>());
  CHECK(again.replies[1].cache_read_tokens == u2["cache_read_tokens"].get<int64_t>());
}

TEST_CASE("solve cache: openai: turn 1's messages are a byte prefix of turn 2's, and cached") {
  Harness h;
  Result r = h.solve(two_turns("openai"), "openai", false, {}, priced(h));
  INFO(r.output);
  CHECK(r.code == 0);
  REQUIRE(r.requests.size() == 2);
  // The messages as sent, serialized: turn 1's without its closing ']' begin turn 2's.
  std::string t1 = r.requests[0]["body"]["messages"].dump(),
              t2 = r.requests[1]["body"]["messages"].dump();
  t1.pop_back();
  CHECK(t2.size() > t1.size() + 1000);
  CHECK(t2.compare(0, t1.size(), t1) == 0);
  CHECK(t2[t1.size()] == ',');
  // The server's automatic cache found it: turn 2 cached, priced at the cache-read price.
  const json &u1 = usage_of(r.traj, 0), &u2 = usage_of(r.traj, 1);
  CHECK(u1["cache_read_tokens"] == 0);
  CHECK(u2["cache_read_tokens"].get<int64_t>() >= 1024);
  int64_t read = u2["cache_read_tokens"], in = u2["input_tokens"];
  CHECK(cost_of(r.traj, 1) == doctest::Approx(((in - read) * 3.0 + read * 0.3 + 400 * 15.0) / 1e6));
  CHECK(cost_of(r.traj, 1) < cost_of(r.traj, 0));
}
