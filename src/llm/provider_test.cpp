#include "llm/provider.h"

#include <doctest/doctest.h>

#include <algorithm>

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

TEST_CASE("llm provider: the table's rows: defaults per provider") {
  ProviderInfo d;
  REQUIRE(find_provider("together", &d));
  CHECK(d.wire == WireFormat::openai);
  CHECK(d.base_url == "https://api.together.ai/v1");
  CHECK(d.api_key_env == "TOGETHER_API_KEY");
  REQUIRE(find_provider("anthropic", &d));
  CHECK(std::string(wire_name(d.wire)) == "anthropic");
  CHECK(d.api_key_env == "ANTHROPIC_API_KEY");
  REQUIRE(find_provider("replay", &d));
  CHECK(d.factory);
  REQUIRE(find_provider("builtin", &d));
  CHECK_FALSE(d.needs_model);
  CHECK_FALSE(find_provider("nope", &d));
}

TEST_CASE("llm provider: an unknown provider's messages list the table's names") {
  std::vector<std::string> names = provider_names();
  for (const char* n : {"openai", "anthropic", "together", "openrouter", "replay", "builtin"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  std::string p, m, err;
  CHECK_FALSE(parse_model_spec("nope:x", &p, &m, &err));
  CHECK(err.find("(providers: " + provider_names_text() + ")") != std::string::npos);
  ProviderConfig c;
  c.provider = "nope";
  CHECK(make_provider(c, &err) == nullptr);
  CHECK(err.find("(providers: " + provider_names_text() + ")") != std::string::npos);
  // builtin is a row but no llm::Provider: the factory says who runs it.
  c.provider = "builtin";
  CHECK(make_provider(c, &err) == nullptr);
  CHECK(err.find("kforge solve --model builtin") != std::string::npos);
}

TEST_CASE("llm provider: a registered row is one more row of the same table") {
  std::string err;
  ProviderConfig c;
  c.provider = "replay";
  CHECK(make_provider(c, &err) == nullptr);  // a row, but replay needs a file
  CHECK(err.find("replay:FILE") != std::string::npos);

  struct Canned : Provider {
    bool complete(const Request&, Reply* r, Error*) override {
      r->text = "canned";
      return true;
    }
    std::string name() const override { return "canned"; }
  };
  ProviderInfo row;
  row.name = "canned_test";
  row.base_url = "http://127.0.0.1:1/v1";
  row.factory = [](const ProviderConfig& cfg, std::string*) {
    CHECK(cfg.base_url == "http://127.0.0.1:1/v1");  // the row's default, filled in
    return std::unique_ptr<Provider>(new Canned);
  };
  register_provider(row);
  // Out again however the case ends: the table is the process's, and other cases (and the
  // kforge binary they compare with) have only its own rows.
  struct Unregister {
    ~Unregister() { unregister_provider("canned_test"); }
  } unregister;
  std::string p, m;
  CHECK(parse_model_spec("canned_test:x", &p, &m, &err));
  CHECK(provider_names_text().find("canned_test") != std::string::npos);
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
  unregister_provider("canned_test");
  CHECK(provider_names_text().find("canned_test") == std::string::npos);
}

}  // namespace llm
