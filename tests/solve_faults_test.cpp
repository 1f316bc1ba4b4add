// `kforge solve` through the providers' faults, against the loopback fake LLM server:
// the retries happen inside the provider, so each run still meets its target (and
// replay reproduces it); a fault that is not retryable ends the run with exit 3.
#include <doctest/doctest.h>

#include "tests/solve_harness.h"

using namespace solve_test;

namespace {

// The run met its target on its one turn, the reply took `attempts` HTTP requests, the
// server saw as many, and the trajectory replays.
void check_recovered(Harness& h, const Result& r, int attempts) {
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(r.result.value("target_met", false));
  auto reply = r.traj.of_type(trace::EventType::reply);
  REQUIRE(reply.size() == 1);
  CHECK((*reply[0])["attempts"] == attempts);
  CHECK(r.requests.size() == static_cast<size_t>(attempts));
  CHECK(r.traj.of_type(trace::EventType::llm_error).empty());
  CHECK(r.traj.complete);
  check_replay(h, r);
}

}  // namespace

TEST_CASE("solve: 429 with retry-after, then success") {
  Harness h;
  json script =
      json::array({{{"status", 429},
                    {"headers", {{"retry-after", "1"}}},
                    {"body", fake_llm::openai_error("rate_limit_exceeded", "Rate limit reached")}},
                   openai_ok(fenced("cpp", right_kernel()))});
  Result r = h.solve(script, "openai", false);
  check_recovered(h, r, 2);
  CHECK((*r.traj.of_type(trace::EventType::reply)[0])["seconds"].get<double>() >= 1.0);
}

TEST_CASE("solve: 500 twice, then success") {
  Harness h;
  json fail = {{"status", 500}, {"body", fake_llm::openai_error("server_error", "boom")}};
  Result r =
      h.solve(json::array({fail, fail, openai_ok(fenced("cpp", right_kernel()))}), "openai", false);
  check_recovered(h, r, 3);
}

TEST_CASE("solve: anthropic 529 overloaded, then success") {
  Harness h;
  json script = json::array(
      {{{"status", 529}, {"body", fake_llm::anthropic_error("overloaded_error", "Overloaded")}},
       anthropic_ok(fenced("cpp", right_kernel()))});
  Result r = h.solve(script, "anthropic", false);
  check_recovered(h, r, 2);
}

TEST_CASE("solve: a stalled stream hits the idle time-out, then success") {
  Harness h;
  std::vector<std::string> pieces = {
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me\"}}]}\n\n",
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" think\"}}]}\n\n"};
  std::string body = fenced("cpp", right_kernel());
  std::string ok =
      "data: " +
      json{{"choices", {{{"index", 0}, {"delta", {{"content", body}}}, {"finish_reason", "stop"}}}}}
          .dump() +
      "\n\ndata: [DONE]\n\n";
  json script = json::array(
      {{{"stream", pieces}, {"stall_after_bytes", 70}}, {{"stream", json::array({ok})}}});
  Result r = h.solve(script, "openai", true, {"--idle-timeout", "1"});
  check_recovered(h, r, 2);
  CHECK((*r.traj.of_type(trace::EventType::reply)[0])["text"] ==
        body);  // not the stalled attempt's words
}

TEST_CASE("solve: a truncated JSON body is retried, then success") {
  Harness h;
  json script = json::array(
      {{{"body", fake_llm::openai_body(fenced("cpp", right_kernel()))}, {"truncate_at", 60}},
       openai_ok(fenced("cpp", right_kernel()))});
  Result r = h.solve(script, "openai", false);
  check_recovered(h, r, 2);
}

TEST_CASE("solve: a whole body that is cut JSON is retried like a cut stream, then success") {
  Harness h;
  json script = json::array({{{"body", "{\"id\": \"chatcmpl-1\", \"choices\": [{\"mess"}},
                             openai_ok(fenced("cpp", right_kernel()))});
  Result r = h.solve(script, "openai", false);
  check_recovered(h, r, 2);
}

TEST_CASE("solve: a provider error that is not retryable ends the run with exit 3, recorded") {
  Harness h;
  // Valid JSON that is no chat completion: the server broke its format; no retry mends it.
  json script = json::array(
      {{{"body", json{{"id", "chatcmpl-1"}, {"object", "chat.completion"}}}}, openai_ok("unused")});
  Result r = h.solve(script, "openai", false);
  INFO(r.output);
  CHECK(r.code == 3);
  CHECK(r.result["error"] == "provider");
  CHECK(r.result["exit_reason"] == "llm_error");
  CHECK(r.output.find("bad_response") != std::string::npos);
  auto errs = r.traj.of_type(trace::EventType::llm_error);
  REQUIRE(errs.size() == 1);
  CHECK((*errs[0])["kind"] == "bad_response");
  CHECK(r.traj.complete);
  CHECK((*r.traj.summary())["exit_reason"] == "llm_error");
}
