// The retry policy and the transport's faults, against the loopback fake_llm_server:
// 429 with retry-after, 5xx, 529, quota, a stalled stream, truncated and invalid bodies,
// a dropped connection, an error event mid-stream.
#include <doctest/doctest.h>

#include "tests/fake_llm/fixtures.h"
#include "tests/has.h"

using nlohmann::json;

namespace {

struct LlmRun {
  fake_llm::Server server;
  fake_llm::Setup st;
  llm::Reply reply;
  llm::Error error;
  bool ok = false;
  std::vector<int> retry_attempts;       // what on_retry was told
  std::vector<std::string> retry_notes;  // and the error it was shown
};

// Starts a server on script, makes one call (adjust lets a test change the config).
void call(LlmRun* run, const std::string& wire, const json& script, bool stream = false,
          const std::function<void(llm::ProviderConfig&)>& adjust = {}) {
  std::string err;
  REQUIRE_MESSAGE(run->server.start(script, &err), err);
  run->st = fake_llm::setup(run->server, wire);
  run->st.cfg.stream = stream;
  if (adjust) adjust(run->st.cfg);
  auto p = llm::make_provider(run->st.cfg, &err);
  REQUIRE_MESSAGE(p, err);
  llm::Request q = fake_llm::ask();
  q.on_retry = [run](int next, const llm::Error& why) {
    run->retry_attempts.push_back(next);
    run->retry_notes.push_back(why.message);
  };
  run->ok = p->complete(q, &run->reply, &run->error);
}

}  // namespace

TEST_CASE("llm: 429 with retry-after: 1, then success (2 attempts, really waiting 1 s)") {
  LlmRun run;
  call(&run, "openai",
       json::array({{{"status", 429},
                     {"headers", {{"retry-after", "1"}}},
                     {"body", fake_llm::openai_error("rate_limit_exceeded", "Rate limit reached")}},
                    {{"body", fake_llm::openai_body("ok")}}}),
       false, [](llm::ProviderConfig& c) { c.sleep = nullptr; });  // the real sleep
  REQUIRE_MESSAGE(run.ok, run.error.message);
  CHECK(run.reply.text == "ok");
  CHECK(run.reply.attempts == 2);
  CHECK(run.reply.seconds >= 1.0);  // retry-after is a lower bound the client must honour
  CHECK(run.retry_attempts == std::vector<int>{2});
  CHECK(run.server.requests().size() == 2);
}

TEST_CASE("llm: 500 twice, then success (3 attempts, back-off 0.5 s then 1 s)") {
  LlmRun run;
  json fail = {{"status", 500}, {"body", fake_llm::openai_error("server_error", "boom")}};
  call(&run, "openai", json::array({fail, fail, {{"body", fake_llm::openai_body("third")}}}));
  REQUIRE_MESSAGE(run.ok, run.error.message);
  CHECK(run.reply.text == "third");
  CHECK(run.reply.attempts == 3);
  CHECK(*run.st.waits == std::vector<double>{0.5, 1.0});
  CHECK(run.server.wait_exit(5) == 0);
}

TEST_CASE("llm: anthropic 529 overloaded is retried, then success") {
  LlmRun run;
  call(&run, "anthropic",
       json::array({{{"status", 529},
                     {"body", fake_llm::anthropic_error("overloaded_error", "Overloaded")}},
                    {{"body", fake_llm::anthropic_body("fine")}}}));
  REQUIRE_MESSAGE(run.ok, run.error.message);
  CHECK(run.reply.text == "fine");
  CHECK(run.reply.attempts == 2);
}

TEST_CASE("llm: 529 on every attempt gives overloaded after 3 attempts") {
  LlmRun run;
  json busy = {{"status", 529},
               {"body", fake_llm::anthropic_error("overloaded_error", "Overloaded")}};
  call(&run, "anthropic", json::array({busy, busy, busy}));
  CHECK_FALSE(run.ok);
  CHECK(run.error.kind == llm::ErrorKind::overloaded);
  CHECK(run.error.http_status == 529);
  CHECK(has(run.error.message, "overloaded"));
  CHECK(has(run.error.message, "gave up after 3 attempts"));
  CHECK(run.reply.attempts == 3);
  CHECK(run.server.requests().size() == 3);
}

TEST_CASE("llm: insufficient_quota is a quota error and is not retried") {
  LlmRun run;
  call(
      &run, "openai",
      json::array({{{"status", 429},
                    {"body", fake_llm::openai_error("insufficient_quota",
                                                    "You exceeded your current quota, please check "
                                                    "your plan and billing details.")}},
                   {{"body", fake_llm::openai_body("never")}}}));
  CHECK_FALSE(run.ok);
  CHECK(run.error.kind == llm::ErrorKind::quota);
  CHECK_FALSE(run.error.retryable);
  CHECK(has(run.error.message, fake_llm::kOpenAIKeyVar));
  CHECK(run.reply.attempts == 1);
  CHECK(run.server.requests().size() == 1);
}

TEST_CASE("llm: anthropic 429 for a spend limit is quota; a plain 429 is rate_limited") {
  json spend = fake_llm::anthropic_error("rate_limit_error", "You have reached your spend limit");
  spend["error"]["details"] = {{"error_code", "enforced_spend_limit_reached"}};
  LlmRun run;
  call(&run, "anthropic", json::array({{{"status", 429}, {"body", spend}}}));
  CHECK(run.error.kind == llm::ErrorKind::quota);
  CHECK(run.reply.attempts == 1);
  LlmRun run2;
  call(&run2, "anthropic",
       json::array({{{"status", 429},
                     {"headers", {{"retry-after", "0"}}},
                     {"body", fake_llm::anthropic_error("rate_limit_error", "slow down")}}}),
       false, [](llm::ProviderConfig& c) { c.retry.max_retries = 0; });
  CHECK(run2.error.kind == llm::ErrorKind::rate_limited);
  CHECK(run2.error.retryable);
}

TEST_CASE("llm: a stalled stream hits the idle time-out (1 s) as kind timeout") {
  LlmRun run;
  std::vector<std::string> pieces = {
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}\n\n",
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tial\"}}]}\n\n"};
  call(&run, "openai", json::array({{{"stream", pieces}, {"stall_after_bytes", 70}}}), true,
       [](llm::ProviderConfig& c) {
         c.timeouts.idle_s = 1;
         c.retry.max_retries = 0;
       });
  CHECK_FALSE(run.ok);
  CHECK(run.error.kind == llm::ErrorKind::timeout);
  CHECK(run.error.retryable);
  CHECK(has(run.error.message, "idle"));
}

TEST_CASE("llm: a truncated JSON body is bad_response showing its first bytes") {
  LlmRun run;
  call(&run, "openai",
       json::array({{{"body", fake_llm::openai_body("cut short")}, {"truncate_at", 40}}}), false,
       [](llm::ProviderConfig& c) { c.retry.max_retries = 0; });
  CHECK_FALSE(run.ok);
  CHECK(run.error.kind == llm::ErrorKind::bad_response);
  CHECK(has(run.error.message, "{\"choices\":"));  // nlohmann sorts keys: the body's start
  CHECK(has(run.error.message, "after 40 bytes"));
}

TEST_CASE("llm: a cut connection is retried; so is a whole body that is cut JSON") {
  LlmRun run;
  call(&run, "openai",
       json::array({{{"body", fake_llm::openai_body("x")}, {"truncate_at", 10}},
                    {{"close", true}},
                    {{"body", fake_llm::openai_body("whole")}}}));
  REQUIRE_MESSAGE(run.ok, run.error.message);
  CHECK(run.reply.text == "whole");
  CHECK(run.reply.attempts == 3);
  // A body whose Content-Length matched but whose JSON stops short (a proxy's cut, a
  // server's bug): retried with the same policy as a cut stream, not the run's end.
  LlmRun run2;
  call(&run2, "anthropic",
       json::array({{{"body", "{\"id\":\"msg\",\"content\":[{\"ty"}},
                    {{"body", fake_llm::anthropic_body("second")}}}));
  REQUIRE_MESSAGE(run2.ok, run2.error.message);
  CHECK(run2.reply.text == "second");
  CHECK(run2.reply.attempts == 2);
  CHECK(run2.retry_attempts == std::vector<int>{2});
  CHECK(*run2.st.waits == std::vector<double>{0.5});  // the policy's first back-off
}

TEST_CASE("llm: a cut JSON body on every attempt gives up after the retries, naming it") {
  LlmRun run;
  json cut = {{"body", "{\"choices\":[{\"message\":{\"content\":\"ha"}};
  call(&run, "openai", json::array({cut, cut, cut}));
  CHECK_FALSE(run.ok);
  CHECK(run.error.kind == llm::ErrorKind::bad_response);
  CHECK(has(run.error.message, "not valid JSON (truncated?)"));
  CHECK(has(run.error.message, "gave up after 3 attempts"));
  CHECK(run.reply.attempts == 3);
  // Valid JSON that is no reply is the server breaking its format: asking again will
  // not mend it, so it is not retried.
  LlmRun run2;
  call(&run2, "openai",
       json::array(
           {{{"body", json{{"unexpected", true}}}}, {{"body", fake_llm::openai_body("unused")}}}));
  CHECK_FALSE(run2.ok);
  CHECK(has(run2.error.message, "no choices[0].message"));
  CHECK(run2.reply.attempts == 1);
}

TEST_CASE("llm: a 429 while retrying says when the next try comes; only the give-up advises") {
  LlmRun run;
  json limited = {{"status", 429},
                  {"headers", {{"retry-after", "2"}}},
                  {"body", fake_llm::openai_error("rate_limit_exceeded", "Rate limit reached")}};
  call(&run, "openai", json::array({limited, limited, limited}));
  CHECK_FALSE(run.ok);
  // While kforge retries: that it does, when, and how many tries there are in all; no
  // advice to run again, which the person need not do.
  REQUIRE(run.retry_notes.size() == 2);
  CHECK(has(run.retry_notes[0], "rate limited by openai"));
  CHECK(has(run.retry_notes[0], "kforge retries in 2.0 s (try 2 of 3)"));
  CHECK(has(run.retry_notes[1], "kforge retries in 2.0 s (try 3 of 3)"));
  for (const std::string& n : run.retry_notes) CHECK_FALSE(has(n, "run again"));
  CHECK(run.error.kind == llm::ErrorKind::rate_limited);
  // The final message: what happened, what to do, and that kforge already retried.
  CHECK(has(run.error.message, "wait a minute and run again"));
  CHECK(has(run.error.message, "gave up after 3 attempts"));
  CHECK(*run.st.waits == std::vector<double>{2, 2});
}

TEST_CASE("llm: an error event mid-stream (anthropic overloaded) is retried") {
  std::vector<std::string> failing = {
      "event: message_start\ndata: "
      "{\"type\":\"message_start\",\"message\":{\"model\":\"claude-test\"}}\n\n",
      "event: error\ndata: "
      "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"
      "\n\n"};
  std::vector<std::string> good = {
      "event: message_start\ndata: "
      "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n",
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
      "event: message_delta\ndata: "
      "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_"
      "tokens\":2}}\n\n",
      "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"};
  LlmRun run;
  call(&run, "anthropic", json::array({{{"stream", failing}}, {{"stream", good}}}), true);
  REQUIRE_MESSAGE(run.ok, run.error.message);
  CHECK(run.reply.text == "ok");
  CHECK(run.reply.attempts == 2);
  CHECK(run.reply.usage.output_tokens == 2);
}

TEST_CASE("llm: a stream cut before its end is an error, not a short reply") {
  std::vector<std::string> cut = {
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"half\"}}]}\n\n"};
  LlmRun run;
  call(&run, "openai", json::array({{{"stream", cut}}}), true,
       [](llm::ProviderConfig& c) { c.retry.max_retries = 0; });
  CHECK_FALSE(run.ok);
  CHECK(run.error.kind == llm::ErrorKind::bad_response);
  CHECK(has(run.error.message, "[DONE]"));
}

TEST_CASE("llm: nobody listening is a connection error naming the URL, retried") {
  fake_llm::Server s;
  std::string err;
  REQUIRE_MESSAGE(s.start(json::array({{{"body", fake_llm::openai_body("one")}}}), &err), err);
  auto st = fake_llm::setup(s, "openai");
  auto p = llm::make_provider(st.cfg, &err);
  llm::Reply r;
  llm::Error e;
  REQUIRE(p->complete(fake_llm::ask(), &r, &e));
  REQUIRE(s.wait_exit(5) == 0);  // script spent: the port is closed now
  CHECK_FALSE(p->complete(fake_llm::ask(), &r, &e));
  CHECK(e.kind == llm::ErrorKind::connection);
  CHECK(e.retryable);
  CHECK(has(e.message, s.url()));
  CHECK(r.attempts == 3);
  CHECK(*st.waits == std::vector<double>{0.5, 1.0});
}
