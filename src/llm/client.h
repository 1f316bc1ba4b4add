// src/llm/client.h: the attempt loop both wire formats share: call, and on a retryable
// error wait as the policy says (retry.h) and call again, up to max_retries times.
#pragma once

#include <functional>
#include <string>

#include "llm/errors.h"
#include "llm/http.h"
#include "llm/provider.h"
#include "llm/sse.h"

namespace llm {

// One attempt. Returns true on success; otherwise sets *err (err->retryable decides)
// and *headers (the response's, for retry-after). It adds the HTTP requests it made to
// reply->attempts itself, since one attempt may make two (max_tokens fallback).
using AttemptFn = std::function<bool(Reply* reply, Error* err, Headers* headers)>;

// Runs attempts until one succeeds, an error is not retryable, or the retries are
// spent. Fills reply->seconds. On failure the message says how many attempts were made.
bool run_with_retries(const ProviderConfig& cfg, const Request& req, const AttemptFn& attempt,
                      Reply* reply, Error* err);

// One HTTP request of an attempt, the part both wire formats share: POSTs `hr` with
// cfg's time-outs (the idle one from the first byte when streaming); when `stream`,
// hands every SSE event of a 2xx body to on_event as it arrives and keeps the bytes in
// *raw (for messages, and for a server that ignored "stream"). Counts the request in
// reply->attempts and copies the response's headers to *headers. False with *err
// (error_from_fault) when no complete response came; any status is the caller's.
bool post_once(const ProviderConfig& cfg, const CallContext& ctx, HttpRequest hr, bool stream,
               const std::function<void(const SseEvent&)>& on_event, std::string* raw,
               HttpResponse* resp, Reply* reply, Headers* headers, Error* err);

}  // namespace llm

namespace llm {

// Fills reply->cost_usd (and cost_note) from cfg.prices: the configured model name
// first, then the name the server answered with (often a dated snapshot).
void account_cost(const ProviderConfig& cfg, Reply* reply);

// base_url without trailing slashes.
std::string trim_url(std::string base);

}  // namespace llm
