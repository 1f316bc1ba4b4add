#include "llm/provider.h"

#include <doctest/doctest.h>

namespace llm {

TEST_CASE("llm provider: --model provider:name") {
  std::string p, m, err;
  REQUIRE(parse_model_spec("openai:gpt-5", &p, &m, &err));
  CHECK(p == "openai");
  CHECK(m == "gpt-5");
  REQUIRE(parse_model_spec("openai:llama3:8b", &p, &m, &err));  // Ollama names keep their colon
  CHECK(m == "llama3:8b");
  REQUIRE(parse_model_spec("together:meta-llama/Llama-3.3-70B-Instruct-Turbo", &p, &m, &err));
  CHECK(p == "together");
  REQUIRE(parse_model_spec("builtin", &p, &m, &err));
  CHECK(p == "builtin");
  CHECK(m.empty());
  CHECK_FALSE(parse_model_spec("claude-sonnet-4-5", &p, &m, &err));
  CHECK(err.find("anthropic:claude-sonnet-4-5") != std::string::npos);  // suggests the fix
  CHECK_FALSE(parse_model_spec("openai:", &p, &m, &err));
  CHECK(err.find("needs a model name") != std::string::npos);
  CHECK_FALSE(parse_model_spec(":x", &p, &m, &err));
}

TEST_CASE("llm provider: defaults per provider") {
  ProviderDefaults d;
  REQUIRE(provider_defaults("together", &d));
  CHECK(d.wire == "openai");
  CHECK(d.base_url == "https://api.together.ai/v1");
  CHECK(d.api_key_env == "TOGETHER_API_KEY");
  REQUIRE(provider_defaults("anthropic", &d));
  CHECK(d.api_key_env == "ANTHROPIC_API_KEY");
  CHECK_FALSE(provider_defaults("nope", &d));
}

TEST_CASE("llm provider: the factory, and providers registered from outside") {
  std::string err;
  ProviderConfig c;
  c.provider = "replay";
  CHECK(make_provider(c, &err) == nullptr);
  CHECK(err.find("replay") != std::string::npos);

  struct Canned : Provider {
    bool complete(const Request&, Reply* r, Error*) override {
      r->text = "canned";
      return true;
    }
    std::string name() const override { return "canned"; }
  };
  register_provider("canned_test", [](const ProviderConfig&, std::string*) {
    return std::unique_ptr<Provider>(new Canned);
  });
  std::string p, m;
  CHECK(parse_model_spec("canned_test:x", &p, &m, &err));
  c.provider = "canned_test";
  auto prov = make_provider(c, &err);
  REQUIRE(prov);
  Reply r;
  Error e;
  CHECK(prov->complete(Request{}, &r, &e));
  CHECK(r.text == "canned");

  c.provider = "openai";
  c.model = "";
  CHECK(make_provider(c, &err) == nullptr);
  c.model = "gpt-5";
  auto o = make_provider(c, &err);
  REQUIRE(o);
  CHECK(o->name() == "openai:gpt-5");
}

}  // namespace llm
