// src/llm/provider.h: what the agent loop sees of a language model. One call in, one
// reply out, with the usage, the cost and a typed error whose message says what to do.
// The wire formats (openai.cpp, anthropic.cpp), the retries (retry.h, core.h) and
// HTTP (http.h) are one provider core (core.h) with a small part per wire format
// (wire.h); every provider is a row of one table (ProviderInfo, below).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "enum_names.h"
#include "llm/pricing.h"
#include "llm/retry.h"

namespace llm {

struct Message {
  std::string role;  // system | user | assistant
  std::string content;
};

// What went wrong with a model call, for the loop (interrupted and deadline stop it
// quietly) and for the person (the name leads the message: "rate_limited: ...").
enum class ErrorKind {
  none,
  missing_key,
  auth,
  not_found,  // the model, at that URL
  quota,
  rate_limited,
  overloaded,
  timeout,
  connection,
  bad_response,
  bad_request,
  server,
  interrupted,  // a signal asked kforge to stop
  deadline,     // the run's wall-time budget ran out mid-call
};
// Its name: "rate_limited", ... (what trajectories and result lines record), from the
// one table below (sandbox/enum_names.h).
const char* error_kind_name(ErrorKind k);

struct Error {
  ErrorKind kind = ErrorKind::none;
  std::string message;  // names the input and says what to do
  int http_status = 0;  // 0 when no HTTP response came
  bool retryable = false;
  // What the person can do about it, said only when kforge gives up (not while it is
  // still retrying): run_with_retries appends it to the final message.
  std::string advice;
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
  // The server reported none, so the tokens were counted from the text (estimate_usage):
  // these figures, and the cost priced from them, are estimates; budgets bind on them.
  bool estimated = false;
};

// Tokens counted from text where a server reports none. OpenAI's documented rule of
// thumb is about 4 characters a token for English; code and other languages tokenize
// denser, so this counts one token per 3 bytes, rounded up, to err high (the budget's
// estimate of a prompt before a call uses the same rate). The prompt adds OpenAI's
// per-message framing (3 tokens a message, 3 to prime the reply; the tiktoken cookbook).
int64_t estimate_tokens(const std::string& text);
Usage estimate_usage(const std::vector<Message>& prompt, const std::string& text,
                     const std::string& thinking);
// What a summary says of a run with estimated usage: the figures, that they are
// estimates, how they were counted and that budgets bind on them.
std::string estimated_usage_text(int64_t tokens, double cost_usd);

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
// with colons ("openai:llama3:8b" for Ollama) survive; "builtin" needs no model. The
// provider must be in the table (below). Return false on error.
bool parse_model_spec(const std::string& spec, std::string* provider, std::string* model,
                      std::string* err);

using ProviderFactory =
    std::function<std::unique_ptr<Provider>(const ProviderConfig&, std::string* err)>;

// How a provider talks to its server; none for those that speak no HTTP (replay, builtin).
enum class WireFormat { none, openai, anthropic };
const char* wire_name(WireFormat w);  // "openai", from the table below

// One row of the provider table: the one place a provider is named. `kforge solve`
// (--model, through resolve_provider_config and make_provider), `--model replay:FILE`
// and `kforge sweep` (its --model values are checked here before any sample runs) all
// resolve providers through it, and every unknown-provider message lists its names.
struct ProviderInfo {
  std::string name;
  WireFormat wire = WireFormat::none;
  std::string base_url;       // the default --base-url
  std::string api_key_env;    // the default key variable
  std::string example_model;  // for messages: "--model NAME:<example>"
  bool needs_model = true;
  // Null for a row that is not an llm::Provider: builtin, the agent's template search,
  // which `kforge solve` runs itself. make_provider says `note` for it then.
  ProviderFactory factory;
  std::string note;
};

// The table's names, in its order: openai, anthropic, together, openrouter, replay,
// builtin, then any registered later.
std::vector<std::string> provider_names();
// The names joined for a message: "openai, anthropic, ...".
std::string provider_names_text();

// The row named; false when the table has none.
bool find_provider(const std::string& name, ProviderInfo* out);

// Adds a row to the table, or replaces the row of the same name (tests and extensions
// register their providers this way; there is no other). Thread-safe.
void register_provider(ProviderInfo info);
// Takes the row of that name out of the table again (a test's own row). Thread-safe.
void unregister_provider(const std::string& name);

// The provider named by cfg.provider, built by its row's factory with the row's base URL
// and key variable where cfg leaves them empty; null with *err.
std::unique_ptr<Provider> make_provider(const ProviderConfig& cfg, std::string* err);

// The output cap a request asks for: req.max_tokens, else the configured one, lowered
// to req.max_tokens_cap when that is set.
int64_t output_cap(const Request& req, int configured);

}  // namespace llm

template <>
struct sandbox::EnumNames<llm::ErrorKind> {
  static constexpr const char* what = "model call error";
  static constexpr const char* names[] = {"none",        "missing_key",  "auth",        "not_found",
                                          "quota",       "rate_limited", "overloaded",  "timeout",
                                          "connection",  "bad_response", "bad_request", "server",
                                          "interrupted", "deadline"};
};
template <>
struct sandbox::EnumNames<llm::WireFormat> {
  static constexpr const char* what = "wire format";
  static constexpr const char* names[] = {"none", "openai", "anthropic"};
};

namespace llm {

inline const char* error_kind_name(ErrorKind k) {
  return sandbox::enum_name(k);
}
inline const char* wire_name(WireFormat w) {
  return sandbox::enum_name(w);
}

}  // namespace llm
