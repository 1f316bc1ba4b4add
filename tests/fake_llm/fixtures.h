// tests/fake_llm/fixtures.h: what the provider tests share: a ProviderConfig aimed at
// a running fake server with short time-outs and a recorded (not slept) back-off, and
// canned bodies in both wire formats.
#pragma once

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llm/provider.h"
#include "sha256.h"
#include "tests/fake_llm/harness.h"

namespace fake_llm {

// Test-only key variables, so a developer's real keys are never sent anywhere.
inline const char* kOpenAIKeyVar = "KF_TEST_OPENAI_KEY";
inline const char* kAnthropicKeyVar = "KF_TEST_ANTHROPIC_KEY";
inline const char* kKey = "sk-test-not-a-real-key";

inline std::string key_hash() {
  return sandbox::sha256_hex(kKey).substr(0, 16);
}

struct Setup {
  llm::ProviderConfig cfg;
  std::shared_ptr<std::vector<double>> waits = std::make_shared<std::vector<double>>();
};

// wire: "openai" or "anthropic".
inline Setup setup(const Server& s, const std::string& wire) {
  Setup st;
  setenv(kOpenAIKeyVar, kKey, 1);
  setenv(kAnthropicKeyVar, kKey, 1);
  llm::ProviderConfig& c = st.cfg;
  c.provider = wire;
  c.model = wire == "openai" ? "gpt-test" : "claude-test";
  c.base_url = wire == "openai" ? s.url() + "/v1" : s.url();
  c.api_key_env = wire == "openai" ? kOpenAIKeyVar : kAnthropicKeyVar;
  c.stream = false;
  c.max_tokens = 256;
  c.timeouts = {2, 5, 20};
  auto prices = std::make_shared<llm::PriceTable>();
  prices->set("gpt-test", {2.0, 10.0, 0.5, -1});
  prices->set("claude-test", {3.0, 15.0, 0.3, 3.75});
  c.prices = prices;
  auto waits = st.waits;
  c.sleep = [waits](double s) { waits->push_back(s); };  // recorded, not slept
  c.rand01 = [] { return 0.0; };                         // no jitter: exact back-offs
  return st;
}

// Stream pieces for the script, as {"hex": ...} so that a piece may end inside a
// UTF-8 sequence (a JSON string cannot).
inline nlohmann::json raw_pieces(const std::vector<std::string>& pieces) {
  nlohmann::json out = nlohmann::json::array();
  static const char* digits = "0123456789abcdef";
  for (const std::string& p : pieces) {
    std::string h;
    for (unsigned char c : p) h += {digits[c >> 4], digits[c & 15]};
    out.push_back({{"hex", h}});
  }
  return out;
}

inline llm::Request ask(const std::string& user = "write a kernel") {
  llm::Request r;
  r.messages = {{"system", "you write CUDA"}, {"user", user}};
  return r;
}

inline nlohmann::json openai_body(const std::string& text, int in = 12, int out = 30,
                                  int reasoning = 0) {
  return {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"model", "gpt-test-2025"},
          {"choices",
           {{{"index", 0},
             {"message", {{"role", "assistant"}, {"content", text}}},
             {"finish_reason", "stop"}}}},
          {"usage",
           {{"prompt_tokens", in},
            {"completion_tokens", out},
            {"total_tokens", in + out},
            {"completion_tokens_details", {{"reasoning_tokens", reasoning}}}}}};
}

inline nlohmann::json anthropic_body(const std::string& text) {
  return {
      {"id", "msg_1"},
      {"type", "message"},
      {"role", "assistant"},
      {"model", "claude-test"},
      {"content",
       {{{"type", "thinking"}, {"thinking", "let me think"}}, {{"type", "text"}, {"text", text}}}},
      {"stop_reason", "end_turn"},
      {"usage",
       {{"input_tokens", 10},
        {"output_tokens", 20},
        {"cache_read_input_tokens", 100},
        {"cache_creation_input_tokens", 0}}}};
}

inline nlohmann::json openai_error(const std::string& code, const std::string& msg,
                                   const std::string& param = "") {
  return {{"error",
           {{"message", msg},
            {"type", code == "insufficient_quota" ? code : "invalid_request_error"},
            {"param", param.empty() ? nlohmann::json() : nlohmann::json(param)},
            {"code", code}}}};
}

inline nlohmann::json anthropic_error(const std::string& type, const std::string& msg) {
  return {
      {"type", "error"}, {"error", {{"type", type}, {"message", msg}}}, {"request_id", "req_1"}};
}

}  // namespace fake_llm
