// src/llm/anthropic.h: the Anthropic Messages API wire format (x-api-key,
// anthropic-version, a top-level system field, typed content blocks, named stream
// events): this format's part of a provider (wire.h). Free functions for the pieces,
// tested without HTTP.
#pragma once

#include <string>

#include "llm/errors.h"
#include "llm/provider.h"
#include "llm/sse.h"
#include "llm/wire.h"

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
class AnthropicStream : public WireStream {
 public:
  explicit AnthropicStream(const Request& req) : req_(req) {}
  bool ended() const override { return stopped_; }  // message_stop seen
  const char* end_marker() const override { return "message_stop"; }
  bool failed(ApiError* api, int* status) const override;

 protected:
  void on_event(const SseEvent& ev, Reply* reply) override;

 private:
  const Request& req_;
  bool stopped_ = false, failed_ = false;
  ApiError error_;
};

}  // namespace llm
