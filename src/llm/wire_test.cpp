// The two wire formats' pure pieces: request bodies, replies, error bodies, stop reasons.
#include <doctest/doctest.h>

#include "llm/anthropic.h"
#include "llm/openai.h"

namespace llm {

using nlohmann::json;

TEST_CASE("llm wire: openai error bodies, including llama.cpp's integer code") {
  ApiError a = openai_parse_error(R"({"error":{"message":"m","type":"t","param":"p","code":"c"}})");
  CHECK(a.parsed);
  CHECK(a.code == "c");
  CHECK(a.param == "p");
  a = openai_parse_error(
      R"({"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}})");
  CHECK(a.code == "401");
  a = openai_parse_error("<html>bad gateway</html>");
  CHECK_FALSE(a.parsed);
  CHECK(a.message.find("bad gateway") != std::string::npos);
}

TEST_CASE("llm wire: status and body map to error kinds") {
  CallContext ctx{"openai", "gpt-x", "http://h/v1/chat/completions", "OPENAI_API_KEY"};
  Headers none;
  ApiError q;
  q.parsed = true;
  q.code = "insufficient_quota";
  CHECK(error_from_status(429, q, none, ctx).kind == ErrorKind::quota);
  CHECK_FALSE(error_from_status(429, q, none, ctx).retryable);
  CHECK(error_from_status(429, ApiError{}, none, ctx).kind == ErrorKind::rate_limited);
  CHECK(error_from_status(429, ApiError{}, none, ctx).retryable);
  // A solve makes one call at a time: no "parallel samples" to lower (a sweep says --jobs).
  Error limited = error_from_status(429, ApiError{}, none, ctx);
  CHECK(limited.message.find("parallel") == std::string::npos);
  // What to do is advice for the final give-up, not part of what a retry note says.
  CHECK(limited.message.find("wait a minute") == std::string::npos);
  CHECK(limited.advice.find("wait a minute and run again") != std::string::npos);
  CHECK(limited.message.find("OPENAI_API_KEY") != std::string::npos);
  Error auth = error_from_status(401, ApiError{}, none, ctx);
  CHECK(auth.kind == ErrorKind::auth);
  CHECK(auth.message.find("OPENAI_API_KEY") != std::string::npos);
  ApiError nf;
  nf.code = "model_not_found";
  Error e = error_from_status(400, nf, none, ctx);
  CHECK(e.kind == ErrorKind::not_found);
  CHECK(e.message.find("gpt-x") != std::string::npos);
  CHECK(error_from_status(503, ApiError{}, none, ctx).kind == ErrorKind::server);
  CHECK(error_from_status(529, ApiError{}, none, ctx).kind == ErrorKind::overloaded);
  CHECK_FALSE(error_from_status(500, ApiError{}, {{"x-should-retry", "false"}}, ctx).retryable);
  ApiError credit;
  credit.message = "Your credit balance is too low to access the Anthropic API.";
  CHECK(error_from_status(400, credit, none, ctx).kind == ErrorKind::quota);
  CHECK(error_from_status(400, ApiError{}, none, ctx).kind == ErrorKind::bad_request);
}

TEST_CASE("llm wire: stop reasons are normalized") {
  CHECK(openai_stop_reason("stop") == "stop");
  CHECK(openai_stop_reason("length") == "length");
  CHECK(openai_stop_reason("function_call") == "tool_calls");
  CHECK(openai_stop_reason("weird") == "other");
  CHECK(anthropic_stop_reason("end_turn") == "stop");
  CHECK(anthropic_stop_reason("stop_sequence") == "stop");
  CHECK(anthropic_stop_reason("max_tokens") == "length");
  CHECK(anthropic_stop_reason("model_context_window_exceeded") == "length");
  CHECK(anthropic_stop_reason("tool_use") == "tool_calls");
  CHECK(anthropic_stop_reason("refusal") == "content_filter");
  CHECK(anthropic_stop_reason("pause_turn") == "pause");
}

TEST_CASE("llm wire: request bodies") {
  ProviderConfig c;
  c.model = "m";
  c.max_tokens = 100;
  Request r;
  r.messages = {{"system", "a"}, {"system", "b"}, {"user", "u"}};
  r.max_tokens = 7;
  r.temperature = 0.3;
  json o = json::parse(openai_request_body(c, r, "max_tokens", true));
  CHECK(o["max_tokens"] == 7);
  CHECK(o["temperature"] == 0.3);
  CHECK(o["stream_options"]["include_usage"] == true);
  CHECK(o["messages"].size() == 3);
  c.prompt_cache = false;
  json a = json::parse(anthropic_request_body(c, r, false));
  CHECK(a["system"] == "a\n\nb");
  CHECK(a["messages"].size() == 1);
  CHECK(a["max_tokens"] == 7);
  CHECK_FALSE(a.contains("stream"));
  // A sweep's sample seed: sent on the OpenAI wire when set, never otherwise; Anthropic's
  // API has no seed to send.
  CHECK_FALSE(o.contains("seed"));
  r.seed = 3;
  CHECK(json::parse(openai_request_body(c, r, "max_tokens", true))["seed"] == 3);
  CHECK_FALSE(json::parse(anthropic_request_body(c, r, false)).contains("seed"));
}

TEST_CASE(
    "llm wire: anthropic cache breakpoints on the system prompt, the task and the last turn") {
  ProviderConfig c;
  c.model = "m";
  Request r;
  r.messages = {{"system", "sys"}, {"user", "task"}};
  json eph = {{"type", "ephemeral"}};
  // Turn 1: the system prompt and the task, each one text block with cache_control.
  json a = json::parse(anthropic_request_body(c, r, false));
  REQUIRE(a["system"].is_array());
  CHECK(a["system"] == json::array({{{"type", "text"}, {"text", "sys"}, {"cache_control", eph}}}));
  REQUIRE(a["messages"].size() == 1);
  CHECK(a["messages"][0]["content"] ==
        json::array({{{"type", "text"}, {"text", "task"}, {"cache_control", eph}}}));
  // Turn 3: the task keeps its breakpoint, the last message gets one, the ones between
  // are plain strings (four breakpoints at most; three are used).
  r.messages.push_back({"assistant", "k1"});
  r.messages.push_back({"user", "fb1"});
  r.messages.push_back({"assistant", "k2"});
  r.messages.push_back({"user", "fb2"});
  a = json::parse(anthropic_request_body(c, r, false));
  const json& m = a["messages"];
  REQUIRE(m.size() == 5);
  CHECK(m[0]["content"][0]["cache_control"] == eph);
  CHECK(m[1]["content"] == "k1");
  CHECK(m[2]["content"] == "fb1");
  CHECK(m[3]["content"] == "k2");
  CHECK(m[4]["content"] ==
        json::array({{{"type", "text"}, {"text", "fb2"}, {"cache_control", eph}}}));
  int marks = a["system"][0].contains("cache_control") ? 1 : 0;
  for (const json& x : m)
    if (x["content"].is_array())
      for (const json& b : x["content"]) marks += b.contains("cache_control") ? 1 : 0;
  CHECK(marks == 3);
  // Off: plain strings, as before.
  c.prompt_cache = false;
  a = json::parse(anthropic_request_body(c, r, false));
  CHECK(a["system"] == "sys");
  CHECK(a["messages"][4]["content"] == "fb2");
}

TEST_CASE("llm wire: replies without text, and the reasoning fields of other servers") {
  Reply r;
  std::string what;
  REQUIRE(openai_parse_reply(R"({"choices":[{"message":{"content":null,"reasoning_content":"think"},
      "finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":2,
      "prompt_tokens_details":{"cached_tokens":1}}})",
                             &r, &what));
  CHECK(r.text.empty());
  CHECK(r.thinking == "think");
  CHECK(r.usage.cache_read_tokens == 1);
  CHECK(r.stop_reason == "length");
  Reply r2;
  CHECK_FALSE(openai_parse_reply(R"({"choices":[]})", &r2, &what));
  CHECK(what.find("choices") != std::string::npos);
  Reply r3;
  CHECK_FALSE(anthropic_parse_reply(R"({"type":"message"})", &r3, &what));
}

}  // namespace llm
