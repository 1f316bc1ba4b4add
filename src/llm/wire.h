// src/llm/wire.h: the small part of a provider that one wire format owns: where to POST
// and with which headers, the request body, a reply's parsing (whole or streamed, usage
// included) and the error body. Everything the formats share (HTTP, retries, the
// streaming transport, usage estimates, cost) is the provider core (core.h), written once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llm/errors.h"
#include "llm/provider.h"
#include "llm/sse.h"

namespace llm {

// One streamed reply's state, fed event by event.
class WireStream {
 public:
  virtual ~WireStream() = default;
  void feed(const SseEvent& ev, Reply* reply) {
    ++events_;
    on_event(ev, reply);
  }
  int events() const { return events_; }
  // The format's own end of a stream was seen (so a close before it is a cut stream).
  virtual bool ended() const = 0;
  // What ended() waits for, for the message of a cut stream ("message_stop").
  virtual const char* end_marker() const = 0;
  // An error event arrived after the 200: true with *api and the HTTP status it stands
  // for (whether to retry follows from that status, as for an error response).
  virtual bool failed(ApiError* api, int* status) const = 0;
  std::string bad;  // the first event whose data was not JSON

 protected:
  virtual void on_event(const SseEvent& ev, Reply* reply) = 0;

 private:
  int events_ = 0;
};

class Wire {
 public:
  virtual ~Wire() = default;
  // The endpoint for a base URL without trailing slashes.
  virtual std::string url(const std::string& base_url) const = 0;
  // The request's headers; key is "" when none is sent.
  virtual std::vector<std::string> headers(const std::string& key) const = 0;
  virtual std::string body(const Request& req, bool stream) const = 0;
  // A whole (non-streamed) reply into *reply; false with *what when it is not one.
  virtual bool parse_reply(const std::string& body, Reply* reply, std::string* what) const = 0;
  virtual ApiError parse_error(const std::string& body) const = 0;
  virtual std::unique_ptr<WireStream> stream(const Request& req) const = 0;
  // The response header that carries the request's id (lowercase).
  virtual const char* request_id_header() const = 0;
  // A refusal this format knows how to rephrase (OpenAI's two names of the output cap):
  // true when the next body() differs, so the core sends it again at once, once.
  virtual bool rephrase(int status, const ApiError& api) { return false; }
};

// The two formats kforge speaks, for a config whose provider uses them.
std::unique_ptr<Wire> make_openai_wire(const ProviderConfig& cfg);
std::unique_ptr<Wire> make_anthropic_wire(const ProviderConfig& cfg);

}  // namespace llm
