// src/llm/provider.cpp: the provider names, the --model syntax and the factory.
#include "llm/provider.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "llm/anthropic.h"
#include "llm/openai.h"

namespace llm {

namespace {

std::mutex& registry_mu() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, ProviderFactory>& registry() {
  static std::map<std::string, ProviderFactory> r;
  return r;
}

// Providers that need no model name after the colon.
bool model_optional(const std::string& p) {
  return p == "builtin";
}

}  // namespace

bool provider_defaults(const std::string& p, ProviderDefaults* out) {
  if (p == "openai")
    *out = {"openai", "https://api.openai.com/v1", "OPENAI_API_KEY"};
  else if (p == "together")
    *out = {"openai", "https://api.together.ai/v1", "TOGETHER_API_KEY"};
  else if (p == "openrouter")
    *out = {"openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"};
  else if (p == "anthropic")
    *out = {"anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"};
  else
    return false;
  return true;
}

bool parse_model_spec(const std::string& spec, std::string* provider, std::string* model,
                      std::string* err) {
  size_t colon = spec.find(':');
  std::string p = spec.substr(0, colon);
  std::string m = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (p.empty()) {
    *err = fmt::format(
        "--model \"{}\": expected provider:name, e.g. openai:gpt-5, "
        "anthropic:claude-sonnet-4-5, together:<org>/<model>, builtin",
        spec);
    return false;
  }
  ProviderDefaults d;
  bool known = provider_defaults(p, &d) || p == "builtin" || p == "replay";
  {
    std::lock_guard<std::mutex> lock(registry_mu());
    known = known || registry().count(p);
  }
  if (!known) {
    // A bare model name is the commonest slip: say which prefix it wants.
    std::string guess = spec.rfind("claude", 0) == 0 ? "anthropic:" + spec : "openai:" + spec;
    *err = fmt::format(
        "--model \"{}\": unknown provider \"{}\": use provider:name, e.g. {} "
        "(providers: openai, anthropic, together, openrouter, replay, builtin)",
        spec, p, guess);
    return false;
  }
  if (m.empty() && !model_optional(p)) {
    *err = fmt::format(
        "--model \"{}\": provider {} needs a model name after the colon, "
        "e.g. {}:{}",
        spec, p, p,
        p == "anthropic" ? "claude-sonnet-4-5"
        : p == "replay"  ? "runs/x.jsonl"
                         : "gpt-5");
    return false;
  }
  *provider = p;
  *model = m;
  return true;
}

void register_provider(const std::string& name, ProviderFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mu());
  registry()[name] = std::move(factory);
}

std::unique_ptr<Provider> make_provider(const ProviderConfig& cfg, std::string* err) {
  ProviderFactory f;
  {
    std::lock_guard<std::mutex> lock(registry_mu());
    auto it = registry().find(cfg.provider);
    if (it != registry().end()) f = it->second;
  }
  if (f) return f(cfg, err);
  ProviderDefaults d;
  if (!provider_defaults(cfg.provider, &d)) {
    *err = fmt::format(
        "provider \"{}\" is not available in this build (providers: openai, "
        "anthropic, together, openrouter{})",
        cfg.provider,
        cfg.provider == "replay" || cfg.provider == "builtin"
            ? "; replay and builtin come with the agent"
            : "");
    return nullptr;
  }
  if (cfg.model.empty()) {
    *err = fmt::format("provider {} needs a model: --model {}:NAME", cfg.provider, cfg.provider);
    return nullptr;
  }
  if (d.wire == "anthropic") return std::make_unique<AnthropicProvider>(cfg);
  return std::make_unique<OpenAIProvider>(cfg);
}

int64_t output_cap(const Request& req, int configured) {
  int64_t cap = req.max_tokens > 0 ? req.max_tokens : configured;
  if (req.max_tokens_cap > 0 && req.max_tokens_cap < cap) cap = req.max_tokens_cap;
  return cap;
}

}  // namespace llm
