// Usage a server does not report, against the loopback fake_llm_server: an
// OpenAI-compatible server whose streamed replies carry no usage (as some do, whatever
// stream_options asks). The call is counted from the text, marked an estimate, priced,
// and a whole `kforge solve` binds --max-cost on it and says the figures are estimates in
// the result line, the summary, `kforge show` and a sweep's ledger record.
#include <doctest/doctest.h>

#include "sweep/ledger.h"
#include "sweep/outcome.h"
#include "tests/has.h"
#include "tests/solve_harness.h"

using namespace solve_test;

namespace {

// A streamed Chat Completions reply of `text` that never says its usage.
json stream_without_usage(const std::string& text) {
  json chunk = {{"id", "c1"},
                {"model", "test-model"},
                {"choices", {{{"index", 0}, {"delta", {{"content", text}}}}}}};
  json last = {{"choices", {{{"index", 0}, {"delta", json::object()}, {"finish_reason", "stop"}}}}};
  return {
      {"stream",
       {"data: " + chunk.dump() + "\n\n", "data: " + last.dump() + "\n\n", "data: [DONE]\n\n"}}};
}

// The messages of a recorded Chat Completions request.
}  // namespace

TEST_CASE("llm usage: a stream without usage is counted from the text, marked, and priced") {
  fake_llm::Server s;
  std::string err;
  REQUIRE_MESSAGE(s.start(json::array({stream_without_usage("__global__ void k() {}")}), &err),
                  err);
  auto st = fake_llm::setup(s, "openai");
  st.cfg.stream = true;
  auto p = llm::make_provider(st.cfg, &err);
  REQUIRE_MESSAGE(p, err);
  llm::Request q = fake_llm::ask(std::string(3000, 'x'));
  llm::Reply r;
  llm::Error e;
  REQUIRE_MESSAGE(p->complete(q, &r, &e), e.message);
  CHECK(r.text == "__global__ void k() {}");
  CHECK_FALSE(r.usage.reported);
  CHECK(r.usage.estimated);
  // 3 bytes a token, 3 a message and 3 for the reply: (14/3 + 3) + (3000/3 + 3) + 3.
  CHECK(r.usage.input_tokens == 5 + 3 + 1000 + 3 + 3);
  CHECK(r.usage.output_tokens == 8);  // 22 bytes
  CHECK(r.usage.input_tokens == llm::estimate_usage(q.messages, r.text, "").input_tokens);
  // Priced as reported tokens would be (fixtures: gpt-test at $2 in, $10 out).
  CHECK(r.cost_usd == doctest::Approx((1014 * 2.0 + 8 * 10.0) / 1e6));
  CHECK(r.cost_note.empty());
}

TEST_CASE("llm usage: reported usage stays as reported, not estimated") {
  fake_llm::Server s;
  std::string err;
  REQUIRE_MESSAGE(s.start(json::array({{{"body", fake_llm::openai_body("ok", 12, 30)}}}), &err),
                  err);
  auto st = fake_llm::setup(s, "openai");
  auto p = llm::make_provider(st.cfg, &err);
  llm::Reply r;
  llm::Error e;
  REQUIRE_MESSAGE(p->complete(fake_llm::ask(), &r, &e), e.message);
  CHECK(r.usage.reported);
  CHECK_FALSE(r.usage.estimated);
  CHECK(r.usage.input_tokens == 12);
}

TEST_CASE("llm usage: --max-cost binds on estimated usage, and every report says estimated") {
  Harness h;
  std::string prices = h.dir() + "/prices.json";
  std::ofstream(prices) << R"({"models": {"test-model": {"input": 10.0, "output": 10.0}}})";
  // Kernels that do not compile: each turn is one quick model call and one quick verdict.
  json script = json::array();
  for (int k = 0; k < 8; ++k)
    script.push_back(stream_without_usage(
        fenced("cpp",
               "#include <kf/kf.h>\nextern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return "
               "nope_" +
                   std::to_string(k) + "; }\n")));
  Result r = h.solve(script, "openai", true, {"--max-cost", "0.3", "--max-turns", "8"},
                     {{"prices_file", prices}});
  INFO(r.output);
  REQUIRE(r.result.is_object());
  // Every prompt is 7,000 tokens or more (the task alone is some 20 KB), $0.07 at $10 a
  // million: the budget ends the run before the script does, which it never would at the
  // $0 of unreported usage.
  CHECK(r.result["exit_reason"] == "max_cost");
  CHECK(r.requests.size() < script.size());
  CHECK(r.result["tokens_estimated"] == true);
  CHECK(r.result["tokens_in"].get<int64_t>() > 0);
  // The recorded cost is exactly the estimate of what was sent and answered.
  REQUIRE(r.run.replies.size() == r.requests.size());
  double cost = 0;
  for (size_t i = 0; i < r.run.replies.size(); ++i) {
    const trace::ReplyEvent& rep = r.run.replies[i];
    CHECK(rep.usage_estimated);
    llm::Usage u = llm::estimate_usage(sent_messages(r.requests[i]), rep.text, rep.thinking);
    CHECK(rep.input_tokens == u.input_tokens);
    CHECK(rep.output_tokens == u.output_tokens);
    cost += (u.input_tokens + u.output_tokens) * 10.0 / 1e6;
  }
  CHECK(r.result["cost_usd"].get<double>() == doctest::Approx(cost));
  REQUIRE(r.traj.summary());
  CHECK((*r.traj.summary())["tokens_estimated"] == true);
  // kforge show: the summary's line and each reply's.
  std::string shown;
  CHECK(h.kforge({"show", r.trajectory_path}, &shown) == 0);
  CHECK(has(shown, "usage estimated: the server reported none"));
  CHECK(has(shown, "out tokens (estimated)"));
  // A sweep's ledger record of this run.
  sweep::Record rec;
  sweep::read_outcome(r.out_dir, r.code, r.output, &rec);
  CHECK(rec.usage_estimated);
  CHECK(json(rec)["usage_estimated"] == true);
  CHECK(rec.cost_usd == doctest::Approx(cost));
}
