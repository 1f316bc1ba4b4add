// src/llm/provider.cpp: the provider table, the --model syntax and the factory.
#include "llm/provider.h"

#include <fmt/format.h>

#include <mutex>

#include "llm/core.h"
#include "llm/replay.h"

namespace llm {

namespace {

// The factory of a row served by the provider core in wire format `wire`.
ProviderFactory http_provider(WireFormat wire) {
  return [wire](const ProviderConfig& cfg, std::string* err) -> std::unique_ptr<Provider> {
    if (cfg.model.empty()) {
      *err = fmt::format("provider {} needs a model: --model {}:NAME", cfg.provider, cfg.provider);
      return nullptr;
    }
    return make_http_provider(cfg, wire, err);
  };
}

std::unique_ptr<Provider> replay_provider(const ProviderConfig& cfg, std::string* err) {
  if (cfg.model.empty()) return (*err = "replay needs a file: --model replay:FILE", nullptr);
  return make_replay_provider(cfg.model, err);
}

struct Table {
  std::mutex mu;
  std::vector<ProviderInfo> rows;
};

Table& table() {
  static Table* t = [] {
    auto* t = new Table;
    t->rows = {
        {"openai", WireFormat::openai, "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-5", true,
         http_provider(WireFormat::openai), ""},
        {"anthropic", WireFormat::anthropic, "https://api.anthropic.com", "ANTHROPIC_API_KEY",
         "claude-sonnet-4-5", true, http_provider(WireFormat::anthropic), ""},
        {"together", WireFormat::openai, "https://api.together.ai/v1", "TOGETHER_API_KEY",
         "<org>/<model>", true, http_provider(WireFormat::openai), ""},
        {"openrouter", WireFormat::openai, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
         "<org>/<model>", true, http_provider(WireFormat::openai), ""},
        {"replay", WireFormat::none, "", "", "runs/<problem>/<run>.jsonl", true, replay_provider,
         ""},
        {"builtin", WireFormat::none, "", "", "", false, nullptr,
         "builtin is the agent's template search, not a model server: `kforge solve --model "
         "builtin` runs it"},
    };
    return t;
  }();
  return *t;
}

}  // namespace

std::vector<std::string> provider_names() {
  std::lock_guard<std::mutex> lock(table().mu);
  std::vector<std::string> out;
  for (const ProviderInfo& r : table().rows) out.push_back(r.name);
  return out;
}

std::string provider_names_text() {
  std::string s;
  for (const std::string& n : provider_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool find_provider(const std::string& name, ProviderInfo* out) {
  std::lock_guard<std::mutex> lock(table().mu);
  for (const ProviderInfo& r : table().rows)
    if (r.name == name) return (*out = r, true);
  return false;
}

void register_provider(ProviderInfo info) {
  std::lock_guard<std::mutex> lock(table().mu);
  for (ProviderInfo& r : table().rows)
    if (r.name == info.name) return (void)(r = std::move(info));
  table().rows.push_back(std::move(info));
}

void unregister_provider(const std::string& name) {
  std::lock_guard<std::mutex> lock(table().mu);
  std::erase_if(table().rows, [&](const ProviderInfo& r) { return r.name == name; });
}

bool parse_model_spec(const std::string& spec, std::string* provider, std::string* model,
                      std::string* err) {
  size_t colon = spec.find(':');
  std::string p = spec.substr(0, colon);
  std::string m = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (p.empty()) {
    *err = fmt::format(
        "--model \"{}\": expected provider:name, e.g. openai:gpt-5, "
        "anthropic:claude-sonnet-4-5, together:<org>/<model>, builtin (providers: {})",
        spec, provider_names_text());
    return false;
  }
  ProviderInfo row;
  if (!find_provider(p, &row)) {
    // A bare model name is the commonest slip: say which prefix it wants.
    std::string guess = spec.rfind("claude", 0) == 0 ? "anthropic:" + spec : "openai:" + spec;
    *err = fmt::format(
        "--model \"{}\": unknown provider \"{}\": use provider:name, e.g. {} "
        "(providers: {})",
        spec, p, guess, provider_names_text());
    return false;
  }
  if (m.empty() && row.needs_model) {
    *err = fmt::format("--model \"{}\": provider {} needs a model name after the colon, e.g. {}:{}",
                       spec, p, p, row.example_model);
    return false;
  }
  *provider = p;
  *model = m;
  return true;
}

std::unique_ptr<Provider> make_provider(const ProviderConfig& cfg, std::string* err) {
  ProviderInfo row;
  if (!find_provider(cfg.provider, &row)) {
    *err = fmt::format("provider \"{}\" is not in kforge's provider table (providers: {})",
                       cfg.provider, provider_names_text());
    return nullptr;
  }
  if (!row.factory) {
    *err = row.note;
    return nullptr;
  }
  ProviderConfig c = cfg;
  if (c.base_url.empty()) c.base_url = row.base_url;
  if (c.api_key_env.empty()) c.api_key_env = row.api_key_env;
  return row.factory(c, err);
}

int64_t output_cap(const Request& req, int configured) {
  int64_t cap = req.max_tokens > 0 ? req.max_tokens : configured;
  if (req.max_tokens_cap > 0 && req.max_tokens_cap < cap) cap = req.max_tokens_cap;
  return cap;
}

}  // namespace llm
