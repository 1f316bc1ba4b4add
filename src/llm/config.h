// src/llm/config.h: the optional model configuration file
// (~/.config/kforge/config.json, or --config FILE) and how it merges with the command
// line into a ProviderConfig. API keys never live in it: it names the environment
// variable to read, and a file that holds a key is refused.
//
//   {"model": "openai:gpt-5", "base_url": "http://localhost:8000/v1",
//    "key_env": {"openai": "MY_OPENAI_KEY"},
//    "timeouts": {"connect_s": 5, "idle_s": 60, "total_s": 600},
//    "retry": {"max_retries": 2, "base_s": 0.5, "cap_s": 8, "jitter": 0.25,
//              "max_retry_after_s": 60},
//    "max_tokens": 8192, "temperature": 1.0, "stream": true, "prompt_cache": true,
//    "max_tokens_field": "max_completion_tokens", "prices_file": "config/prices.json"}
#pragma once

#include <map>
#include <optional>
#include <string>

#include "llm/provider.h"

namespace llm {

struct LlmConfig {
  std::string model;  // provider:name
  std::string base_url;
  std::map<std::string, std::string> key_env;  // provider -> variable name
  Timeouts timeouts;
  RetryPolicy retry;
  std::optional<int> max_tokens;
  std::optional<double> temperature;
  std::optional<bool> stream;
  std::optional<bool> prompt_cache;  // anthropic: cache_control on the stable prefix
  std::string max_tokens_field;
  std::string prices_file;  // "" for default_prices_path(); relative to the config file
  std::string source;       // the file read, "" for none
};

// $XDG_CONFIG_HOME/kforge/config.json, else $HOME/.config/kforge/config.json.
std::string default_config_path();

// Reads path into *out. A missing file is fine unless required (an explicit --config).
// Return false on error.
bool load_llm_config(const std::string& path, bool required, LlmConfig* out, std::string* err);
bool parse_llm_config(const std::string& text, const std::string& source, LlmConfig* out,
                      std::string* err);

// A base URL kforge can use: http:// or https://, a host, no spaces. False with *err
// that shows the value and a correct example otherwise (not a connection error later).
bool check_base_url(const std::string& url, const std::string& where, std::string* err);

// Flags win over the file, the file over the defaults. model_spec and base_url are the
// --model and --base-url values ("" when not given). Loads the price table. Return
// false on error (a malformed base URL included).
bool resolve_provider_config(const LlmConfig& file, const std::string& model_spec,
                             const std::string& base_url, ProviderConfig* out, std::string* err);

}  // namespace llm
