// Both wire formats against the loopback fake_llm_server (tests/fake_llm): plain and
// streamed replies, the exact requests sent, usage and cost, the max_tokens fallback,
// and the errors a user meets first (missing key, bad key, wrong model).
#include <doctest/doctest.h>

#include "tests/fake_llm/fixtures.h"

using nlohmann::json;

namespace {

fake_llm::Server& started(fake_llm::Server& s, const json& script) {
  std::string err;
  REQUIRE_MESSAGE(s.start(script, &err), err);
  return s;
}

}  // namespace

TEST_CASE("llm: openai plain reply, the request sent, usage with reasoning, and cost") {
  fake_llm::Server s;
  started(
      s, json::array({{{"status", 200},
                       {"headers", {{"x-request-id", "req-abc"}}},
                       {"body", fake_llm::openai_body("__global__ void k(){}", 1000, 500, 300)}}}));
  auto st = fake_llm::setup(s, "openai");
  std::string err;
  auto p = llm::make_provider(st.cfg, &err);
  REQUIRE_MESSAGE(p, err);
  CHECK(p->name() == "openai:gpt-test");
  llm::Reply r;
  llm::Error e;
  REQUIRE_MESSAGE(p->complete(fake_llm::ask(), &r, &e), e.message);
  CHECK(r.text == "__global__ void k(){}");
  CHECK(r.stop_reason == "stop");
  CHECK(r.raw_stop_reason == "stop");
  CHECK(r.usage.input_tokens == 1000);
  CHECK(r.usage.output_tokens == 500);
  CHECK(r.usage.reasoning_tokens == 300);
  CHECK(r.cost_usd == doctest::Approx((1000 * 2.0 + 500 * 10.0) / 1e6));
  CHECK(r.attempts == 1);
  CHECK(r.model == "gpt-test-2025");
  CHECK(r.request_id == "req-abc");
  auto reqs = s.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0]["path"] == "/v1/chat/completions");
  CHECK(reqs[0]["auth"]["header"] == "authorization");
  CHECK(reqs[0]["auth"]["sha256_prefix"] == fake_llm::key_hash());
  const json& b = reqs[0]["body"];
  CHECK(b["model"] == "gpt-test");
  CHECK(b["max_completion_tokens"] == 256);
  CHECK_FALSE(b.contains("max_tokens"));
  CHECK_FALSE(b.contains("temperature"));  // unset: reasoning models reject it
  CHECK_FALSE(b.contains("stream"));
  REQUIRE(b["messages"].size() == 2);
  CHECK(b["messages"][0] == json{{"role", "system"}, {"content", "you write CUDA"}});
  CHECK(s.wait_exit(5) == 0);
}

TEST_CASE("llm: anthropic plain reply, headers, system field, thinking kept apart") {
  fake_llm::Server s;
  started(s, json::array({{{"status", 200},
                           {"headers", {{"request-id", "req_9"}}},
                           {"body", fake_llm::anthropic_body("the kernel")}}}));
  auto st = fake_llm::setup(s, "anthropic");
  st.cfg.temperature = 0.5;
  std::string err;
  auto p = llm::make_provider(st.cfg, &err);
  REQUIRE_MESSAGE(p, err);
  llm::Reply r;
  llm::Error e;
  REQUIRE_MESSAGE(p->complete(fake_llm::ask(), &r, &e), e.message);
  CHECK(r.text == "the kernel");
  CHECK(r.thinking == "let me think");
  CHECK(r.stop_reason == "stop");
  CHECK(r.raw_stop_reason == "end_turn");
  CHECK(r.usage.input_tokens == 110);  // 10 uncached + 100 read from the cache
  CHECK(r.usage.cache_read_tokens == 100);
  CHECK(r.usage.output_tokens == 20);
  CHECK(r.cost_usd == doctest::Approx((10 * 3.0 + 100 * 0.3 + 20 * 15.0) / 1e6));
  CHECK(r.request_id == "req_9");
  auto reqs = s.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0]["path"] == "/v1/messages");
  CHECK(reqs[0]["headers"]["anthropic-version"] == "2023-06-01");
  CHECK(reqs[0]["auth"]["header"] == "x-api-key");
  CHECK(reqs[0]["auth"]["sha256_prefix"] == fake_llm::key_hash());
  const json& b = reqs[0]["body"];
  CHECK(b["system"][0]["text"] == "you write CUDA");  // a block, for its cache_control
  CHECK(b["max_tokens"] == 256);
  CHECK(b["temperature"] == 0.5);
  REQUIRE(b["messages"].size() == 1);
  CHECK(b["messages"][0]["role"] == "user");
}

TEST_CASE("llm: openai stream split mid-event and mid-\"data:\", with the usage chunk") {
  std::vector<std::string> pieces = {
      ": comment\n\nda",
      "ta: "
      "{\"id\":\"c1\",\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"role\":"
      "\"assistant\",\"content\":\"__glo\"}}]}\n",
      "\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bal__ \xE2",
      "\x82\xAC\"}}]}\n\ndata: "
      "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\nd",
      "ata: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":9,"
      "\"completion_tokens_details\":{\"reasoning_tokens\":4}}}\n\ndata: [DO",
      "NE]\n\n"};
  fake_llm::Server s;
  started(s, json::array({{{"stream", fake_llm::raw_pieces(pieces)}, {"delay_ms_between", 20}}}));
  auto st = fake_llm::setup(s, "openai");
  st.cfg.stream = true;
  std::string err;
  auto p = llm::make_provider(st.cfg, &err);
  llm::Request q = fake_llm::ask();
  std::vector<std::string> deltas;
  q.on_delta = [&](const std::string& d) { deltas.push_back(d); };
  llm::Reply r;
  llm::Error e;
  REQUIRE_MESSAGE(p->complete(q, &r, &e), e.message);
  CHECK(r.text == "__global__ \xE2\x82\xAC");
  CHECK(deltas == std::vector<std::string>{"__glo", "bal__ \xE2\x82\xAC"});
  CHECK(r.stop_reason == "length");
  CHECK(r.usage.input_tokens == 7);
  CHECK(r.usage.output_tokens == 9);
  CHECK(r.usage.reasoning_tokens == 4);
  CHECK(r.cost_usd == doctest::Approx((7 * 2.0 + 9 * 10.0) / 1e6));
  auto reqs = s.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0]["body"]["stream"] == true);
  CHECK(reqs[0]["body"]["stream_options"]["include_usage"] == true);
}

TEST_CASE("llm: anthropic stream split anywhere, thinking counted apart, ping ignored") {
  std::string all =
      "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_s\","
      "\"model\":\"claude-test\",\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\r\n\r\n"
      "event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n"
      "event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":0,"
      "\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\r\n\r\n"
      "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\r\n\r\n"
      "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,"
      "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\r\n\r\n"
      "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,"
      "\"delta\":{\"type\":\"text_delta\",\"text\":\", world\"}}\r\n\r\n"
      "event: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
      "\"max_tokens\"},\"usage\":{\"output_tokens\":40}}\r\n\r\n"
      "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";
  // Cut every 37 bytes: through field names, JSON, and between \r and \n.
  std::vector<std::string> pieces;
  for (size_t i = 0; i < all.size(); i += 37) pieces.push_back(all.substr(i, 37));
  fake_llm::Server s;
  started(s, json::array({{{"stream", pieces}, {"delay_ms_between", 2}}}));
  auto st = fake_llm::setup(s, "anthropic");
  st.cfg.stream = true;
  std::string err;
  auto p = llm::make_provider(st.cfg, &err);
  llm::Request q = fake_llm::ask();
  std::string live;
  int64_t tokens = 0;
  q.on_delta = [&](const std::string& d) { live += d; };
  q.on_tokens = [&](int64_t n) { tokens = n; };
  llm::Reply r;
  llm::Error e;
  REQUIRE_MESSAGE(p->complete(q, &r, &e), e.message);
  CHECK(r.text == "Hello, world");
  CHECK(live == "Hello, world");
  CHECK(r.thinking == "hmm");
  CHECK(r.stop_reason == "length");
  CHECK(r.raw_stop_reason == "max_tokens");
  CHECK(r.usage.input_tokens == 25);
  CHECK(r.usage.output_tokens == 40);
  CHECK(tokens == 40);
  CHECK(r.request_id == "msg_s");
  CHECK(s.requests().at(0)["body"]["stream"] == true);
}

TEST_CASE("llm: max_tokens fallback on unsupported_parameter, kept for later calls") {
  fake_llm::Server s;
  started(s, json::array({{{"status", 400},
                           {"body", fake_llm::openai_error(
                                        "unsupported_parameter",
                                        "Unsupported parameter: 'max_tokens' is not supported "
                                        "with this model. Use 'max_completion_tokens' instead.",
                                        "max_tokens")}},
                          {{"body", fake_llm::openai_body("one")}},
                          {{"body", fake_llm::openai_body("two")}}}));
  auto st = fake_llm::setup(s, "openai");
  st.cfg.max_tokens_field = "max_tokens";  // as for an older server
  std::string err;
  auto p = llm::make_provider(st.cfg, &err);
  llm::Reply r;
  llm::Error e;
  REQUIRE_MESSAGE(p->complete(fake_llm::ask(), &r, &e), e.message);
  CHECK(r.text == "one");
  CHECK(r.attempts == 2);
  CHECK(st.waits->empty());  // a fallback is not a retry: no back-off
  REQUIRE_MESSAGE(p->complete(fake_llm::ask(), &r, &e), e.message);
  CHECK(r.attempts == 1);
  auto reqs = s.requests();
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[0]["body"].contains("max_tokens"));
  CHECK(reqs[1]["body"]["max_completion_tokens"] == 256);
  CHECK_FALSE(reqs[1]["body"].contains("max_tokens"));
  CHECK(reqs[2]["body"].contains("max_completion_tokens"));
}

TEST_CASE("llm: a missing key fails before any request, naming the variable") {
  fake_llm::Server s;
  started(s, json::array({{{"body", fake_llm::openai_body("unused")}}}));
  auto st = fake_llm::setup(s, "openai");
  st.cfg.api_key_env = "KF_TEST_UNSET_KEY_VAR";
  unsetenv("KF_TEST_UNSET_KEY_VAR");
  std::string err;
  auto p = llm::make_provider(st.cfg, &err);
  llm::Error e;
  CHECK_FALSE(p->ready(&e));
  llm::Reply r;
  CHECK_FALSE(p->complete(fake_llm::ask(), &r, &e));
  CHECK(e.kind == llm::ErrorKind::missing_key);
  CHECK(e.message.find("KF_TEST_UNSET_KEY_VAR is not set") != std::string::npos);
  CHECK(e.message.find("--model builtin") != std::string::npos);
  CHECK(s.requests().empty());
}

TEST_CASE("llm: 401 names the key variable, 404 the model; neither is retried") {
  fake_llm::Server s;
  started(s,
          json::array(
              {{{"status", 401},
                {"body", fake_llm::anthropic_error("authentication_error", "invalid x-api-key")}},
               {{"status", 404},
                {"body", fake_llm::anthropic_error("not_found_error", "model: claude-nope")}}}));
  auto st = fake_llm::setup(s, "anthropic");
  std::string err;
  auto p = llm::make_provider(st.cfg, &err);
  llm::Reply r;
  llm::Error e;
  CHECK_FALSE(p->complete(fake_llm::ask(), &r, &e));
  CHECK(e.kind == llm::ErrorKind::auth);
  CHECK(e.http_status == 401);
  CHECK(e.message.find(fake_llm::kAnthropicKeyVar) != std::string::npos);
  CHECK(r.attempts == 1);
  CHECK_FALSE(p->complete(fake_llm::ask(), &r, &e));
  CHECK(e.kind == llm::ErrorKind::not_found);
  CHECK(e.message.find("claude-test") != std::string::npos);
  CHECK(e.message.find("check --model") != std::string::npos);
  CHECK(s.requests().size() == 2);
  CHECK(s.wait_exit(5) == 0);
}
