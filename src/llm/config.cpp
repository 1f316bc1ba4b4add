// src/llm/config.cpp: see config.h.
#include "llm/config.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace llm {

using nlohmann::json;

std::string default_config_path() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    return std::string(x) + "/kforge/config.json";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.config/kforge/config.json";
  return "";
}

bool load_llm_config(const std::string& path, bool required, LlmConfig* out, std::string* err) {
  *out = LlmConfig{};
  std::ifstream in(path);
  if (!in) {
    if (!required) return true;
    *err = fmt::format("{}: cannot read the config file: check --config", path);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_llm_config(ss.str(), path, out, err);
}

namespace {

// A field that looks like it holds a secret.
bool is_key_field(const std::string& k) {
  return k == "api_key" || k == "key" || k == "apikey" || k == "token" ||
         (k.size() > 4 && k.compare(k.size() - 4, 4, "_key") == 0);
}

// Sets the number field `group`.`f` (group: timeouts or retry) to d; false where there
// is no such field.
bool set_number(LlmConfig* c, const std::string& group, const std::string& f, double d) {
  if (group == "timeouts" && f == "connect_s")
    c->timeouts.connect_s = d;
  else if (group == "timeouts" && f == "idle_s")
    c->timeouts.idle_s = d;
  else if (group == "timeouts" && f == "total_s")
    c->timeouts.total_s = d;
  else if (group == "retry" && f == "max_retries")
    c->retry.max_retries = static_cast<int>(d);
  else if (group == "retry" && f == "base_s")
    c->retry.base_s = d;
  else if (group == "retry" && f == "cap_s")
    c->retry.cap_s = d;
  else if (group == "retry" && f == "jitter")
    c->retry.jitter = d;
  else if (group == "retry" && f == "max_retry_after_s")
    c->retry.max_retry_after_s = d;
  else
    return false;
  return true;
}

}  // namespace

bool parse_llm_config(const std::string& text, const std::string& source, LlmConfig* out,
                      std::string* err) {
  *out = LlmConfig{};
  out->source = source;
  json j = json::parse(text, nullptr, false, /*ignore_comments=*/true);
  if (j.is_discarded() || !j.is_object()) {
    *err = fmt::format("{}: not a JSON object: fix the syntax (see src/llm/config.h)", source);
    return false;
  }
  auto bad = [&](const std::string& field, const char* want) {
    *err = fmt::format("{}: field \"{}\" must be {}", source, field, want);
    return false;
  };
  for (auto& [k, v] : j.items()) {
    if (is_key_field(k))
      return (*err = fmt::format("{}: field \"{}\": keys are read only from environment "
                                 "variables; remove it and name the variable in key_env "
                                 "instead",
                                 source, k),
              false);
    if (k == "model" || k == "base_url" || k == "max_tokens_field" || k == "prices_file") {
      if (!v.is_string()) return bad(k, "a string");
      std::string s = v.get<std::string>();
      if (k == "model")
        out->model = s;
      else if (k == "base_url")
        out->base_url = s;
      else if (k == "prices_file")
        out->prices_file = s;
      else if (s != "max_tokens" && s != "max_completion_tokens")
        return bad(k, "\"max_tokens\" or \"max_completion_tokens\"");
      else
        out->max_tokens_field = s;
    } else if (k == "key_env") {
      if (!v.is_object()) return bad(k, "an object of provider -> variable name");
      for (auto& [p, name] : v.items()) {
        if (!name.is_string()) return bad("key_env." + p, "a variable name");
        out->key_env[p] = name.get<std::string>();
      }
    } else if (k == "timeouts" || k == "retry") {
      if (!v.is_object()) return bad(k, "an object");
      for (auto& [f, x] : v.items()) {
        if (!x.is_number() || x.get<double>() < 0) return bad(k + "." + f, "a non-negative number");
        if (!set_number(out, k, f, x.get<double>()))
          return bad(k + "." + f, "a known field (see src/llm/config.h)");
      }
    } else if (k == "max_tokens") {
      if (!v.is_number_integer() || v.get<int>() <= 0) return bad(k, "a positive integer");
      out->max_tokens = v.get<int>();
    } else if (k == "temperature") {
      if (!v.is_number()) return bad(k, "a number");
      out->temperature = v.get<double>();
    } else if (k == "stream" || k == "prompt_cache") {
      if (!v.is_boolean()) return bad(k, "true or false");
      (k == "stream" ? out->stream : out->prompt_cache) = v.get<bool>();
    } else if (k.empty() || k[0] != '_') {
      return bad(
          k,
          "one of model, base_url, key_env, timeouts, retry, max_tokens, "
          "temperature, stream, prompt_cache, max_tokens_field, prices_file (or start with _)");
    }
  }
  return true;
}

bool check_base_url(const std::string& url, const std::string& where, std::string* err) {
  size_t p = url.find("://");
  std::string scheme = p == std::string::npos ? "" : url.substr(0, p);
  std::string host =
      p == std::string::npos ? "" : url.substr(p + 3, url.find_first_of("/?#", p + 3) - p - 3);
  bool spaces = url.find_first_of(" \t\r\n") != std::string::npos;
  if ((scheme == "http" || scheme == "https") && !host.empty() && host[0] != ':' && !spaces)
    return true;
  *err = fmt::format(
      "{} \"{}\" is not a URL kforge can use ({}): give the scheme and the host, "
      "e.g. http://localhost:8000/v1 for a local vLLM or SGLang server, or "
      "https://api.openai.com/v1",
      where, url,
      spaces                                  ? "it contains spaces"
      : scheme.empty()                        ? "no http:// or https://"
      : scheme != "http" && scheme != "https" ? "unknown scheme " + scheme + "://"
                                              : "no host");
  return false;
}

bool resolve_provider_config(const LlmConfig& file, const std::string& model_spec,
                             const std::string& base_url, ProviderConfig* out, std::string* err) {
  ProviderConfig c;
  std::string spec = !model_spec.empty() ? model_spec : file.model;
  if (spec.empty()) spec = "builtin";  // no model configured: run without one
  if (!parse_model_spec(spec, &c.provider, &c.model, err)) return false;
  // A base URL in the file belongs to the file's model; --model alone does not take it.
  c.base_url = !base_url.empty()                                  ? base_url
               : (model_spec.empty() || model_spec == file.model) ? file.base_url
                                                                  : "";
  if (!c.base_url.empty() &&
      !check_base_url(c.base_url, !base_url.empty() ? "--base-url" : file.source + ": base_url",
                      err))
    return false;
  if (auto it = file.key_env.find(c.provider); it != file.key_env.end()) c.api_key_env = it->second;
  c.timeouts = file.timeouts;
  c.retry = file.retry;
  if (file.max_tokens) c.max_tokens = *file.max_tokens;
  c.temperature = file.temperature;
  if (file.stream) c.stream = *file.stream;
  if (file.prompt_cache) c.prompt_cache = *file.prompt_cache;
  if (!file.max_tokens_field.empty()) c.max_tokens_field = file.max_tokens_field;
  std::string prices = file.prices_file;
  if (!prices.empty() && prices[0] != '/' && !file.source.empty())
    prices = (std::filesystem::path(file.source).parent_path() / prices).string();
  auto table = std::make_shared<PriceTable>();
  if (!prices.empty()) {
    if (!table->load(prices, err)) return false;  // asked for by name: must be readable
    c.prices = table;
  } else {
    std::string ignored;  // the shipped default may be absent in an install: cost 0, noted
    if (table->load(default_prices_path(), &ignored)) c.prices = table;
  }
  *out = std::move(c);
  return true;
}

}  // namespace llm
