// src/llm/anthropic.h: the Anthropic Messages API wire format (x-api-key,
// anthropic-version, a top-level system field, typed content blocks, named stream
// events). Free functions for the pieces, tested without HTTP.
#pragma once

#include <optional>
#include <string>

#include "llm/errors.h"
#include "llm/provider.h"
#include "llm/sse.h"

namespace llm {

// With cfg.prompt_cache, the system prompt, the first user message and the last message
// are text blocks with cache_control {"type": "ephemeral"}; otherwise plain strings.
std::string anthropic_request_body(const ProviderConfig& cfg, const Request& req, bool stream);

// A non-streamed message into *reply. Return false (with *what) when it is not one.
bool anthropic_parse_reply(const std::string& body, Reply* reply, std::string* what);

// {"type":"error","error":{"type","message","details":{"error_code"}}}, lenient.
ApiError anthropic_parse_error(const std::string& body);

// end_turn|stop_sequence -> stop, max_tokens|model_context_window_exceeded -> length,
// tool_use -> tool_calls, refusal -> content_filter, pause_turn -> pause, else other.
std::string anthropic_stop_reason(const std::string& stop_reason);

// The HTTP status an error type stands for, for errors that arrive mid-stream.
int anthropic_error_status(const std::string& type);

// The state of one streamed message, fed event by event.
class AnthropicStream {
 public:
  explicit AnthropicStream(const Request& req) : req_(req) {}
  void on_event(const SseEvent& ev, Reply* reply);
  bool stopped() const { return stopped_; }  // message_stop seen
  bool failed() const { return failed_; }    // an error event
  const ApiError& error() const { return error_; }
  int events() const { return events_; }
  std::string bad;  // the first event whose data was not JSON

 private:
  const Request& req_;
  bool stopped_ = false, failed_ = false;
  int events_ = 0;
  ApiError error_;
};

class AnthropicProvider : public Provider {
 public:
  explicit AnthropicProvider(ProviderConfig cfg);
  bool complete(const Request& req, Reply* reply, Error* err) override;
  std::string name() const override { return cfg_.provider + ":" + cfg_.model; }
  bool ready(Error* err) const override;
  // With the cache prices filled in (a cache write costs more than plain input).
  const Price* price() const override { return price_ ? &*price_ : nullptr; }

 private:
  bool attempt(const Request& req, bool stream, Reply* reply, Error* err, Headers* headers);

  ProviderConfig cfg_;
  CallContext ctx_;
  std::optional<Price> price_;
};

}  // namespace llm
