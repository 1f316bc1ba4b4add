// src/llm/core.h: the provider core, the one place for what every HTTP provider does
// whatever its wire format: the key, one request over HTTP (streamed or not), the
// retries with the SDKs' policy, usage (estimated where the server reports none) and
// cost. The wire format (wire.h) is the small part that differs: the request's body and
// headers, and how a reply, a stream event and an error body read.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "llm/errors.h"
#include "llm/http.h"
#include "llm/provider.h"
#include "llm/wire.h"

namespace llm {

class HttpProvider : public Provider {
 public:
  // cfg with its base URL and key variable filled in (make_provider does).
  HttpProvider(ProviderConfig cfg, std::unique_ptr<Wire> wire);
  bool complete(const Request& req, Reply* reply, Error* err) override;
  std::string name() const override { return cfg_.provider + ":" + cfg_.model; }
  bool ready(Error* err) const override;
  // With the cache prices resolved (PriceTable::resolved).
  const Price* price() const override { return price_ ? &*price_ : nullptr; }

 private:
  bool attempt(const Request& req, bool stream, Reply* reply, Error* err, Headers* headers);
  // A 2xx body into *r: the stream's events, or the whole body. False with *err.
  bool read_reply(const WireStream& st, bool stream, const std::string& raw,
                  const HttpResponse& resp, Reply* r, Error* err) const;

  ProviderConfig cfg_;
  CallContext ctx_;
  std::unique_ptr<Wire> wire_;
  std::optional<Price> price_;
};

// The HTTP provider of cfg.provider's wire format. Null with *err for WireFormat::none.
std::unique_ptr<Provider> make_http_provider(const ProviderConfig& cfg, WireFormat wire,
                                             std::string* err);

// One attempt. Returns true on success; otherwise sets *err (err->retryable decides)
// and *headers (the response's, for retry-after). It adds the HTTP requests it made to
// reply->attempts itself, since one attempt may make two (a rephrased request).
using AttemptFn = std::function<bool(Reply* reply, Error* err, Headers* headers)>;

// Runs attempts until one succeeds, an error is not retryable, or the retries are
// spent. Fills reply->seconds. Before a retry, req.on_retry hears the error with when
// the next attempt comes and how many are left; only the final failure's message says
// what the person can do (Error::advice) and how many attempts were made.
bool run_with_retries(const ProviderConfig& cfg, const Request& req, const AttemptFn& attempt,
                      Reply* reply, Error* err);

// Fills reply->cost_usd (and cost_note) from cfg.prices: the configured model name
// first, then the name the server answered with (often a dated snapshot).
void account_cost(const ProviderConfig& cfg, Reply* reply);

// base_url without trailing slashes.
std::string trim_url(std::string base);

}  // namespace llm
