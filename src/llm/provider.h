// src/llm/provider.h: what the agent loop sees of a language model. One call in, one
// reply out, with the usage, the cost and a typed error whose message says what to do.
// The wire formats (openai.cpp, anthropic.cpp), the retries (retry.h, client.h) and
// HTTP (http.h) stay behind this interface; replay and builtin providers plug in
// through register_provider() without src/llm depending on the agent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/pricing.h"
#include "llm/retry.h"

namespace llm {

struct Message {
  std::string role;  // system | user | assistant
  std::string content;
};

struct Error {
  // missing_key | auth | not_found (wrong model) | quota | rate_limited | overloaded |
  // timeout | connection | bad_response | bad_request | server | interrupted (a signal
  // asked kforge to stop) | deadline (the run's wall-time budget ran out mid-call)
  std::string kind;
  std::string message;  // names the input and says what to do
  int http_status = 0;  // 0 when no HTTP response came
  bool retryable = false;
};

struct Request {
  std::vector<Message> messages;
  int max_tokens = 0;  // 0: the provider's configured value
  // > 0: the reply's output cap is at most this, whatever max_tokens or the configured
  // value say (what a token or cost budget leaves; see output_cap()).
  int64_t max_tokens_cap = 0;
  std::optional<double> temperature;  // unset: the configured one (or the server's default)
  // The sampling seed, so that a sweep's sample i asks the same way every time it runs:
  // OpenAI-compatible servers take it (best effort); Anthropic's API has none to send.
  std::optional<int64_t> seed;
  std::optional<bool> stream;  // unset: the configured one
  // Streamed text as it arrives (only the visible text, not thinking), for live views.
  std::function<void(const std::string& delta)> on_delta;
  // Output tokens so far when the server says (Anthropic's message_delta), for live views.
  std::function<void(int64_t output_tokens)> on_tokens;
  // Called before a retry: deltas already delivered belong to a failed attempt, so a
  // live view should clear them.
  std::function<void(int next_attempt, const Error& why)> on_retry;
};

// Normalized across wire formats. input_tokens counts every prompt token, cached or
// not (OpenAI's prompt_tokens; Anthropic's input + cache read + cache write), and
// output_tokens includes reasoning tokens (both APIs bill reasoning as output).
struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t reasoning_tokens = 0;    // part of output_tokens (OpenAI reports it; Anthropic does not)
  int64_t cache_read_tokens = 0;   // part of input_tokens
  int64_t cache_write_tokens = 0;  // part of input_tokens (Anthropic cache creation)
  bool reported = false;           // false when the server sent no usage (e.g. a cut stream)
};

struct Reply {
  std::string text;             // the visible answer
  std::string thinking;         // reasoning/thinking text where the server sends it, kept apart
  std::string stop_reason;      // stop | length | tool_calls | content_filter | pause | other
  std::string raw_stop_reason;  // as the server said it (end_turn, max_tokens, stop, ...)
  Usage usage;
  double cost_usd = 0;
  std::string cost_note;   // why cost_usd is 0 when it is (no price for the model)
  int attempts = 0;        // HTTP requests made, retries and fallbacks included
  double seconds = 0;      // wall time of the whole call, retry sleeps included
  std::string model;       // the model the server says answered
  std::string request_id;  // x-request-id / request-id header, else the body's id
};

class Provider {
 public:
  virtual ~Provider() = default;
  // One model call, retried per the policy. False with *err set on failure; *reply
  // still carries attempts and seconds then.
  virtual bool complete(const Request& req, Reply* reply, Error* err) = 0;
  // "openai:gpt-5": what trajectories record.
  virtual std::string name() const = 0;
  // Checks what can be checked without a request (the key is set), so that a CLI fails
  // before it starts work. complete() checks the same.
  virtual bool ready(Error* err) const { return true; }
  // The configured model's price, for budgets that must cap a reply before it is paid
  // for; null when the price table has none (its calls then cost 0).
  virtual const Price* price() const { return nullptr; }
};

struct Timeouts {
  double connect_s = 5;  // TCP + TLS handshake
  double idle_s = 60;    // no byte received for this long (see http.h for when it applies)
  double total_s = 600;  // the whole request
};

struct ProviderConfig {
  std::string provider;  // openai | anthropic | together | openrouter | (registered)
  std::string model;
  std::string base_url;     // "" for the provider's default
  std::string api_key_env;  // "" for the provider's default; "none" sends no key
  int max_tokens = 8192;
  std::optional<double> temperature;  // unset: not sent (reasoning models reject it)
  bool stream = true;
  // openai wire only: the name of the output cap, "max_completion_tokens" (the
  // current API) or "max_tokens" (older servers). On a 400 unsupported_parameter naming
  // one, the provider retries once with the other and keeps it.
  std::string max_tokens_field = "max_completion_tokens";
  std::string anthropic_version = "2023-06-01";
  // anthropic wire only: mark the stable prefix (system prompt, task) and the
  // conversation so far with cache_control, so later turns read them from the prompt
  // cache at a tenth of the input price. OpenAI-compatible servers cache prefixes on
  // their own; the loop keeps each turn's messages a prefix of the next turn's for them.
  bool prompt_cache = true;
  Timeouts timeouts;
  RetryPolicy retry;
  std::shared_ptr<const PriceTable> prices;  // null: every cost is 0, with a note
  // Test seams: how to wait between attempts and where jitter comes from.
  std::function<void(double seconds)> sleep;  // null: really sleep
  std::function<double()> rand01;             // null: a uniform [0,1) generator
};

// "openai:gpt-5" -> ("openai", "gpt-5"). Splits at the first ':' only, so model names
// with colons ("openai:llama3:8b" for Ollama) survive; "builtin" needs no model.
// Return false on error.
bool parse_model_spec(const std::string& spec, std::string* provider, std::string* model,
                      std::string* err);

using ProviderFactory =
    std::function<std::unique_ptr<Provider>(const ProviderConfig&, std::string* err)>;

// For providers built elsewhere (the agent's replay and builtin). Replaces a previous
// registration of the same name. Thread-safe.
void register_provider(const std::string& name, ProviderFactory factory);

// The provider named by cfg.provider, or null with *err.
std::unique_ptr<Provider> make_provider(const ProviderConfig& cfg, std::string* err);

// The defaults a provider name implies (openai wire or not, base URL, key variable).
struct ProviderDefaults {
  std::string wire;  // openai | anthropic
  std::string base_url;
  std::string api_key_env;
};
bool provider_defaults(const std::string& provider, ProviderDefaults* out);

// The output cap a request asks for: req.max_tokens, else the configured one, lowered
// to req.max_tokens_cap when that is set.
int64_t output_cap(const Request& req, int configured);

}  // namespace llm
