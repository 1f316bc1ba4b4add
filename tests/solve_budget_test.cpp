// `kforge solve`'s hard budgets against the fake LLM server: --max-wall cuts a model call
// that stalls and an eval that would run long; --max-tokens and --max-cost cap each
// request's output tokens at what is left, exactly as budget.h computes it from the
// recorded requests, and end the run before a call that could not fit.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

#include "agent/budget.h"
#include "kf_build_paths.h"
#include "tests/kforge_child.h"
#include "tests/solve_harness.h"

using namespace solve_test;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The messages of a recorded Chat Completions request.
// A reply with a kernel that does not compile (fast to judge), and the given usage.
json broken_reply(int k, int in, int out) {
  std::string src =
      "#include <kf/kf.h>\nextern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return nope_" +
      std::to_string(k) + "; }\n";
  return {{"body", fake_llm::openai_body(fenced("cpp", src), in, out)}};
}

void check_budget_end(const Result& r, const std::string& name, double limit) {
  INFO(r.output);
  CHECK(r.code == 1);
  REQUIRE(r.result.is_object());
  CHECK(r.result["exit_reason"] == name);
  CHECK(r.result["budget"]["name"] == name);
  CHECK(r.result["budget"]["limit"].get<double>() == limit);
  CHECK(r.traj.complete);
  REQUIRE(r.traj.summary());
  CHECK((*r.traj.summary())["exit_reason"] == name);
  CHECK((*r.traj.summary())["budget"]["name"] == name);
  CHECK(r.traj.of_type(trace::EventType::budget).size() == 1);
}

}  // namespace

TEST_CASE("budget: --max-wall 3 cuts a model call that would stall for 30 s") {
  Harness h;
  json script =
      json::array({{{"body", fake_llm::openai_body("unused")}, {"stall_after_bytes", 0}}});
  auto t0 = std::chrono::steady_clock::now();
  Result r = h.solve(script, "openai", false, {"--max-wall", "3"});
  double took = seconds_since(t0);
  check_budget_end(r, "max_wall", 3);
  CHECK(r.result["budget"]["spent"].get<double>() >= 3);
  CHECK(took < 30);  // a loose sanity bound: the stall alone would have taken 30 s
  auto b = r.traj.of_type(trace::EventType::budget);
  REQUIRE(b.size() == 1);
  CHECK((*b[0])["phase"] == "model call");
  CHECK(r.traj.of_type(trace::EventType::llm_error).empty());
  MESSAGE("--max-wall 3 with a stalled model call: the run took "
          << took << " s, " << r.result["seconds"].get<double>() << " s by its own clock");
}

TEST_CASE(
    "budget: --max-wall cuts an eval, reported as the budget and not as the kernel's timeout") {
  Harness h;
  std::string spin = read_file(std::string(KF_SOURCE_ROOT) + "/tests/kernels/host/spin.cpp");
  auto t0 = std::chrono::steady_clock::now();
  Result r = h.solve(json::array({openai_ok(fenced("cpp", spin))}), "openai", false,
                     {"--max-wall", "5", "--call-limit", "60"});
  double took = seconds_since(t0);
  check_budget_end(r, "max_wall", 5);
  auto b = r.traj.of_type(trace::EventType::budget);
  REQUIRE(b.size() == 1);
  CHECK(((*b[0])["phase"] == "eval" || (*b[0])["phase"] == "compile"));
  CHECK(r.traj.of_type(trace::EventType::verdict).empty());
  // The kernel was written and `kforge show` lists it: the result counts it too.
  CHECK(r.result["candidates"] == 1);
  CHECK(took < 60);  // the kernel's own call limit would have taken 60 s
  CHECK(kforge_child::processes_naming(h.dir()).empty());
  MESSAGE("--max-wall 5 with a spinning kernel: the run took " << took << " s");
}

TEST_CASE("budget: --max-tokens caps each request's max_completion_tokens at what is left") {
  Harness h;
  const int64_t limit = 150000, in = 30000, out = 20000;
  json script = json::array();
  for (int k = 0; k < 8; ++k) script.push_back(broken_reply(k, in, out));
  Result r = h.solve(script, "openai", false,
                     {"--max-tokens", std::to_string(limit), "--reply-max-tokens", "1000000"});
  check_budget_end(r, "max_tokens", static_cast<double>(limit));
  REQUIRE(r.requests.size() >= 2);
  int64_t used = 0;
  for (size_t i = 0; i < r.requests.size(); ++i) {
    int64_t prompt = agent::estimate_prompt_tokens(sent_messages(r.requests[i]));
    CAPTURE(i);
    CHECK(r.requests[i]["body"]["max_completion_tokens"].get<int64_t>() == limit - used - prompt);
    used += in + out;
  }
  CHECK(r.result["tokens_in"].get<int64_t>() + r.result["tokens_out"].get<int64_t>() == used);
  CHECK((*r.traj.of_type(trace::EventType::budget)[0])["spent"].get<int64_t>() == used);
}

TEST_CASE("budget: --max-cost caps each request's output tokens at the model's output price") {
  Harness h;
  std::string prices = h.dir() + "/prices.json";
  std::ofstream(prices) << R"({"models": {"test-model": {"input": 1.0, "output": 10.0}}})";
  const int in = 40000, out = 20000;  // $0.04 + $0.20 a call
  const double limit = 1.0;
  json script = json::array();
  for (int k = 0; k < 8; ++k) script.push_back(broken_reply(k, in, out));
  Result r =
      h.solve(script, "openai", false, {"--max-cost", "1.0", "--reply-max-tokens", "1000000"},
              {{"prices_file", prices}});
  check_budget_end(r, "max_cost", limit);
  REQUIRE(r.requests.size() >= 2);
  double spent = 0;
  for (size_t i = 0; i < r.requests.size(); ++i) {
    int64_t prompt = agent::estimate_prompt_tokens(sent_messages(r.requests[i]));
    double left_usd = limit - spent - prompt * 1.0 / 1e6;
    CAPTURE(i);
    CHECK(r.requests[i]["body"]["max_completion_tokens"].get<int64_t>() ==
          static_cast<int64_t>(std::floor(left_usd * 1e6 / 10.0 + 1e-6)));
    spent += (in * 1.0 + out * 10.0) / 1e6;
  }
  // The fake server bills 20,000 output tokens whatever the cap, so the last call may go
  // over; a real one stops at the cap.
  CHECK(r.result["cost_usd"].get<double>() == doctest::Approx(spent));
}
