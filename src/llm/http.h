// src/llm/http.h: one HTTP POST over libcurl, with the three time-outs an LLM call
// needs and the response headers the retry policy reads. A new easy handle per call
// keeps calls from different threads (sweeps) independent.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "llm/retry.h"

namespace llm {

enum class HttpFault {
  none,
  connect_timeout,  // no connection within connect_timeout_s
  idle_timeout,     // no byte for idle_timeout_s
  total_timeout,    // the whole request took longer than total_timeout_s
  connection,       // refused, reset, closed before a response, DNS, TLS
  partial_body,     // the connection closed before the Content-Length was reached
  interrupted,      // SIGINT/SIGTERM/SIGHUP arrived (sandbox/interrupt.h): aborted at once
  deadline,         // kforge's deadline passed (sandbox/deadline.h, --max-wall)
};

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  double connect_timeout_s = 5;
  // Measured from the last byte received. Before the first byte it applies only when
  // idle_before_first_byte is set: a non-streamed reply arrives in one piece after the
  // model has finished, which can take minutes, so there only total_timeout_s bounds
  // the wait; a stream sends its first bytes at once.
  double idle_timeout_s = 60;
  bool idle_before_first_byte = true;
  double total_timeout_s = 600;
  // When set, the body of a 2xx response goes here as it arrives instead of into
  // HttpResponse::body (error bodies are always collected).
  std::function<void(const char* data, size_t n)> on_body;
};

struct HttpResponse {
  int status = 0;   // 0 when none came
  Headers headers;  // lowercase names; the last value of a repeated header
  std::string body;
  HttpFault fault = HttpFault::none;
  std::string fault_message;  // curl's words, with the URL
  size_t body_bytes = 0;      // received, streamed or not
};

// Performs the request. Returns true when an HTTP response was complete (any status);
// false with resp->fault set otherwise. An interrupt or a passed deadline aborts it
// within about 50 ms, whatever the server is doing.
bool http_post(const HttpRequest& req, HttpResponse* resp);

// The URL's host is 127.0.0.1, ::1 or localhost (such requests never use a proxy).
bool is_loopback_url(const std::string& url);

}  // namespace llm
