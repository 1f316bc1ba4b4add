// src/llm/openai.h: the OpenAI Chat Completions wire format, spoken by OpenAI and by
// most servers with an "OpenAI-compatible" API (Together, OpenRouter, vLLM, SGLang,
// llama.cpp, Ollama). The pieces are free functions so they are tested without HTTP.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "llm/errors.h"
#include "llm/provider.h"
#include "llm/sse.h"

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
class OpenAIStream {
 public:
  explicit OpenAIStream(const Request& req) : req_(req) {}
  void on_event(const SseEvent& ev, Reply* reply);
  bool done() const { return done_; }          // [DONE] seen
  bool finished() const { return finished_; }  // a finish_reason seen
  bool failed() const { return !error_.message.empty() || error_.parsed; }
  const ApiError& error() const { return error_; }
  int events() const { return events_; }
  std::string bad;  // the first event whose data was not JSON

 private:
  const Request& req_;
  bool done_ = false, finished_ = false;
  int events_ = 0;
  ApiError error_;
};

class OpenAIProvider : public Provider {
 public:
  explicit OpenAIProvider(ProviderConfig cfg);
  bool complete(const Request& req, Reply* reply, Error* err) override;
  std::string name() const override { return cfg_.provider + ":" + cfg_.model; }
  bool ready(Error* err) const override;
  const Price* price() const override {
    return cfg_.prices ? cfg_.prices->find(cfg_.provider, cfg_.model) : nullptr;
  }

 private:
  bool attempt(const Request& req, std::string* max_field, bool stream, Reply* reply, Error* err,
               Headers* headers);

  ProviderConfig cfg_;
  CallContext ctx_;
  std::mutex mu_;
  std::string max_field_;  // switches once on an unsupported_parameter 400
};

}  // namespace llm
