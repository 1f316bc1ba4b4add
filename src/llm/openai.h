// src/llm/openai.h: the OpenAI Chat Completions wire format, spoken by OpenAI and by
// most servers with an "OpenAI-compatible" API (Together, OpenRouter, vLLM, SGLang,
// llama.cpp, Ollama): this format's part of a provider (wire.h). The pieces are free
// functions so they are tested without HTTP.
#pragma once

#include <string>

#include "llm/errors.h"
#include "llm/provider.h"
#include "llm/sse.h"
#include "llm/wire.h"

namespace llm {

// The JSON body. max_field is "max_completion_tokens" or "max_tokens".
std::string openai_request_body(const ProviderConfig& cfg, const Request& req,
                                const std::string& max_field, bool stream);

// A non-streamed response body into *reply. Return false (with *what) when it is not
// a chat completion.
bool openai_parse_reply(const std::string& body, Reply* reply, std::string* what);

// An error body ({"error":{"message","type","param","code"}}), lenient.
ApiError openai_parse_error(const std::string& body);

// "stop" | "length" | "tool_calls" | "content_filter" | "other".
std::string openai_stop_reason(const std::string& finish_reason);

// The state of one streamed reply, fed event by event.
class OpenAIStream : public WireStream {
 public:
  explicit OpenAIStream(const Request& req) : req_(req) {}
  bool ended() const override { return done_ || finished_; }  // [DONE] or a finish_reason
  const char* end_marker() const override { return "a finish_reason or [DONE]"; }
  bool failed(ApiError* api, int* status) const override;

 protected:
  void on_event(const SseEvent& ev, Reply* reply) override;

 private:
  const Request& req_;
  bool done_ = false, finished_ = false;
  ApiError error_;
};

}  // namespace llm
