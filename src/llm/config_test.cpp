#include "llm/config.h"

#include <doctest/doctest.h>

namespace llm {

TEST_CASE("llm config: a full file") {
  LlmConfig c;
  std::string err;
  REQUIRE_MESSAGE(
      parse_llm_config(R"({"model": "openai:qwen", "base_url": "http://localhost:8000/v1",
      "key_env": {"openai": "VLLM_KEY"}, "timeouts": {"connect_s": 1, "idle_s": 30, "total_s": 90},
      "retry": {"max_retries": 5, "cap_s": 4}, "max_tokens": 1000, "temperature": 0.2,
      "stream": false, "prompt_cache": false, "max_tokens_field": "max_tokens",
      "_note": "ignored"})",
                       "c.json", &c, &err),
      err);
  ProviderConfig p;
  REQUIRE_MESSAGE(resolve_provider_config(c, "", "", &p, &err), err);
  CHECK(p.provider == "openai");
  CHECK(p.model == "qwen");
  CHECK(p.base_url == "http://localhost:8000/v1");
  CHECK(p.api_key_env == "VLLM_KEY");
  CHECK(p.timeouts.idle_s == 30);
  CHECK(p.retry.max_retries == 5);
  CHECK(p.retry.cap_s == 4);
  CHECK(p.max_tokens == 1000);
  CHECK(*p.temperature == 0.2);
  CHECK_FALSE(p.stream);
  CHECK_FALSE(p.prompt_cache);
  CHECK(p.max_tokens_field == "max_tokens");
  CHECK_FALSE(parse_llm_config(R"({"prompt_cache": "yes"})", "c.json", &c, &err));
  CHECK(err.find("\"prompt_cache\" must be true or false") != std::string::npos);
}

TEST_CASE("llm config: flags win; another --model does not inherit the file's base_url") {
  LlmConfig c;
  std::string err;
  REQUIRE(parse_llm_config(R"({"model": "openai:qwen", "base_url": "http://localhost:8000/v1"})",
                           "c.json", &c, &err));
  ProviderConfig p;
  REQUIRE(resolve_provider_config(c, "anthropic:claude-sonnet-4-5", "", &p, &err));
  CHECK(p.provider == "anthropic");
  CHECK(p.base_url.empty());
  REQUIRE(resolve_provider_config(c, "", "http://other/v1", &p, &err));
  CHECK(p.base_url == "http://other/v1");
  REQUIRE(resolve_provider_config(LlmConfig{}, "", "", &p, &err));
  CHECK(p.provider == "builtin");  // nothing configured: run without a model
}

TEST_CASE("llm config: keys in the file are refused; errors name the field") {
  LlmConfig c;
  std::string err;
  CHECK_FALSE(parse_llm_config(R"({"api_key": "sk-123"})", "c.json", &c, &err));
  CHECK(err.find("environment") != std::string::npos);
  CHECK(err.find("sk-123") == std::string::npos);  // never echo a secret
  CHECK_FALSE(parse_llm_config(R"({"openai_key": "sk-123"})", "c.json", &c, &err));
  CHECK_FALSE(parse_llm_config(R"({"timeouts": {"idle": 3}})", "c.json", &c, &err));
  CHECK(err.find("timeouts.idle") != std::string::npos);
  CHECK_FALSE(parse_llm_config(R"({"max_tokens_field": "tokens"})", "c.json", &c, &err));
  CHECK_FALSE(parse_llm_config(R"({"modle": "x"})", "c.json", &c, &err));
  CHECK(err.find("modle") != std::string::npos);
  CHECK_FALSE(parse_llm_config("[", "c.json", &c, &err));
  CHECK(err.find("c.json") != std::string::npos);
}

TEST_CASE("llm config: a missing file is fine unless asked for") {
  LlmConfig c;
  std::string err;
  CHECK(load_llm_config("/nonexistent/kforge.json", false, &c, &err));
  CHECK_FALSE(load_llm_config("/nonexistent/kforge.json", true, &c, &err));
  CHECK(err.find("/nonexistent/kforge.json") != std::string::npos);
  LlmConfig bad;
  bad.prices_file = "/nonexistent/prices.json";
  ProviderConfig p;
  CHECK_FALSE(resolve_provider_config(bad, "openai:gpt-5", "", &p, &err));
}

}  // namespace llm

namespace llm {

TEST_CASE("llm config: a malformed base URL is refused with an example; key_env none is accepted") {
  std::string err;
  for (const char* bad :
       {"htp:/x", "localhost:8000", "http://local host:8000/v1", "ftp://h/v1", "http://"}) {
    CAPTURE(bad);
    CHECK_FALSE(check_base_url(bad, "--base-url", &err));
    CHECK(err.find(std::string("\"") + bad + "\"") != std::string::npos);
    CHECK(err.find("e.g. http://localhost:8000/v1") != std::string::npos);
  }
  for (const char* good :
       {"http://localhost:8000/v1", "https://api.openai.com/v1", "http://127.0.0.1:9"})
    CHECK_MESSAGE(check_base_url(good, "--base-url", &err), good);
  ProviderConfig p;
  CHECK_FALSE(resolve_provider_config(LlmConfig{}, "openai:x", "localhost:8000", &p, &err));
  CHECK(err.find("--base-url") != std::string::npos);
  LlmConfig c;
  REQUIRE(parse_llm_config(R"({"model": "openai:qwen", "base_url": "http://localhost:8000/v1",
      "key_env": {"openai": "none"}})",
                           "c.json", &c, &err));
  REQUIRE(resolve_provider_config(c, "", "", &p, &err));
  CHECK(p.api_key_env == "none");
}

}  // namespace llm
