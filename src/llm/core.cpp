// src/llm/core.cpp: see core.h.
#include "llm/core.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "llm/sse.h"
#include "sandbox/deadline.h"

namespace llm {

namespace {

double real_rand01() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(gen);
}

// A back-off that an interrupt or the deadline cuts short (the next attempt then stops
// at once), in slices of 50 ms.
void real_sleep(double s) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(s);
  while (!sandbox::stop_requested() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// One HTTP request of an attempt: POSTs `hr` with cfg's time-outs (the idle one from the
// first byte when streaming); when `stream`, hands every SSE event of a 2xx body to
// on_event as it arrives and keeps the bytes in *raw (for messages, and for a server
// that ignored "stream"). Counts the request in reply->attempts and copies the
// response's headers to *headers. False with *err when no complete response came.
bool post_once(const ProviderConfig& cfg, const CallContext& ctx, HttpRequest hr, bool stream,
               const std::function<void(const SseEvent&)>& on_event, std::string* raw,
               HttpResponse* resp, Reply* reply, Headers* headers, Error* err) {
  hr.connect_timeout_s = cfg.timeouts.connect_s;
  hr.idle_timeout_s = cfg.timeouts.idle_s;
  hr.idle_before_first_byte = stream;
  hr.total_timeout_s = cfg.timeouts.total_s;
  SseParser parser;
  std::vector<SseEvent> events;
  raw->clear();
  if (stream)
    hr.on_body = [&](const char* p, size_t n) {
      raw->append(p, n);
      events.clear();
      parser.feed(std::string_view(p, n), &events);
      for (const SseEvent& ev : events) on_event(ev);
    };
  bool got = http_post(hr, resp);
  ++reply->attempts;
  *headers = resp->headers;
  if (!got) {
    if (resp->body.empty()) resp->body = *raw;
    *err = error_from_fault(*resp, ctx);
  }
  return got;
}

}  // namespace

bool run_with_retries(const ProviderConfig& cfg, const Request& req, const AttemptFn& attempt,
                      Reply* reply, Error* err) {
  auto t0 = std::chrono::steady_clock::now();
  auto done = [&](bool ok) {
    reply->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return ok;
  };
  int max_retries = std::max(0, cfg.retry.max_retries);
  for (int retries = 0;; ++retries) {
    Reply r;
    r.attempts = reply->attempts;
    Error e;
    Headers headers;
    if (attempt(&r, &e, &headers)) {
      *reply = std::move(r);
      return done(true);
    }
    reply->attempts = r.attempts;
    if (!e.retryable || retries >= max_retries) {
      *err = e;
      if (!e.advice.empty()) err->message += "; " + e.advice;
      if (e.retryable)
        err->message += fmt::format(" (gave up after {} attempts; retries: retry.max_retries)",
                                    reply->attempts);
      return done(false);
    }
    double wait = retry_delay(cfg.retry, retries, headers,
                              cfg.rand01 ? cfg.rand01() : real_rand01(), std::time(nullptr));
    if (req.on_retry) {
      // kforge is still at it: say when the next try comes and how many are left, not
      // what the person should do (that is for the final failure).
      Error note = e;
      note.message += fmt::format("; kforge retries in {:.1f} s (try {} of {})", wait, retries + 2,
                                  max_retries + 1);
      req.on_retry(reply->attempts + 1, note);
    }
    (cfg.sleep ? cfg.sleep : real_sleep)(wait);
  }
}

HttpProvider::HttpProvider(ProviderConfig cfg, std::unique_ptr<Wire> wire)
    : cfg_(std::move(cfg)), wire_(std::move(wire)) {
  ctx_.provider = cfg_.provider;
  ctx_.model = cfg_.model;
  ctx_.url = wire_->url(trim_url(cfg_.base_url));
  ctx_.key_env = cfg_.api_key_env == "none" ? "" : cfg_.api_key_env;
  if (const Price* p = cfg_.prices ? cfg_.prices->find(cfg_.provider, cfg_.model) : nullptr)
    price_ = cfg_.prices->resolved(cfg_.provider, *p);
}

bool HttpProvider::ready(Error* err) const {
  std::string key;
  return read_key(ctx_, &key, err);
}

bool HttpProvider::complete(const Request& req, Reply* reply, Error* err) {
  *reply = Reply{};
  std::string key;
  if (!read_key(ctx_, &key, err)) return false;
  bool stream = req.stream.value_or(cfg_.stream);
  bool ok = run_with_retries(
      cfg_, req, [&](Reply* r, Error* e, Headers* h) { return attempt(req, stream, r, e, h); },
      reply, err);
  if (!ok) return false;
  // A server that reports no usage (many OpenAI-compatible ones when streaming) would
  // make the call free and the budgets blind: count it from the text, marked estimated.
  if (!reply->usage.reported)
    reply->usage = estimate_usage(req.messages, reply->text, reply->thinking);
  account_cost(cfg_, reply);
  return true;
}

bool HttpProvider::attempt(const Request& req, bool stream, Reply* reply, Error* err,
                           Headers* headers) {
  std::string key;
  if (!read_key(ctx_, &key, err)) return false;
  for (bool rephrased = false;;) {
    HttpRequest hr;
    hr.url = ctx_.url;
    hr.headers = wire_->headers(key);
    hr.body = wire_->body(req, stream);
    Reply r;
    std::unique_ptr<WireStream> st = wire_->stream(req);
    std::string raw;
    HttpResponse resp;
    if (!post_once(
            cfg_, ctx_, std::move(hr), stream, [&](const SseEvent& ev) { st->feed(ev, &r); }, &raw,
            &resp, reply, headers, err))
      return false;
    if (resp.status < 200 || resp.status >= 300) {
      ApiError api = wire_->parse_error(resp.body);
      if (!rephrased && wire_->rephrase(resp.status, api)) {
        rephrased = true;
        continue;
      }
      *err = error_from_status(resp.status, api, resp.headers, ctx_);
      return false;
    }
    r.attempts = reply->attempts;
    if (auto it = resp.headers.find(wire_->request_id_header()); it != resp.headers.end())
      r.request_id = it->second;
    if (!read_reply(*st, stream, raw, resp, &r, err)) return false;
    if (r.model.empty()) r.model = cfg_.model;
    *reply = std::move(r);
    return true;
  }
}

bool HttpProvider::read_reply(const WireStream& st, bool stream, const std::string& raw,
                              const HttpResponse& resp, Reply* r, Error* err) const {
  // A server that ignored "stream" answers with one whole reply.
  if (!stream || (st.events() == 0 && !raw.empty() && raw[0] == '{')) {
    const std::string& body = stream ? raw : resp.body;
    std::string what;
    if (wire_->parse_reply(body, r, &what)) return true;
    // A body cut short (not JSON) is retried as a cut stream is; a whole JSON body that
    // is no reply is the server breaking its format, which asking again will not mend.
    *err = bad_response(what, body, ctx_, !nlohmann::json::accept(body));
    return false;
  }
  ApiError api;
  int status = 0;
  if (st.failed(&api, &status)) {
    *err = error_from_status(status, api, resp.headers, ctx_);
    err->message = "mid-stream: " + err->message;
    return false;
  }
  if (!st.bad.empty()) {
    *err = bad_response("a stream event's data is not JSON", st.bad, ctx_);
    return false;
  }
  if (!st.ended()) {
    *err =
        bad_response(fmt::format("the stream ended before {}", st.end_marker()), raw, ctx_, true);
    return false;
  }
  return true;
}

std::unique_ptr<Provider> make_http_provider(const ProviderConfig& cfg, WireFormat wire,
                                             std::string* err) {
  switch (wire) {
    case WireFormat::openai:
      return std::make_unique<HttpProvider>(cfg, make_openai_wire(cfg));
    case WireFormat::anthropic:
      return std::make_unique<HttpProvider>(cfg, make_anthropic_wire(cfg));
    case WireFormat::none:
      break;
  }
  *err = fmt::format("provider {} speaks no HTTP wire format", cfg.provider);
  return nullptr;
}

void account_cost(const ProviderConfig& cfg, Reply* reply) {
  reply->cost_usd = 0;
  reply->cost_note.clear();
  if (!cfg.prices) {
    reply->cost_note = "no price table loaded: cost counted as 0";
    return;
  }
  const std::string& name =
      cfg.prices->find(cfg.provider, cfg.model) || reply->model.empty() ? cfg.model : reply->model;
  reply->cost_usd = cfg.prices->cost(cfg.provider, name, reply->usage, &reply->cost_note);
}

std::string trim_url(std::string base) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base;
}

int64_t estimate_tokens(const std::string& text) {
  return (static_cast<int64_t>(text.size()) + 2) / 3;
}

Usage estimate_usage(const std::vector<Message>& prompt, const std::string& text,
                     const std::string& thinking) {
  Usage u;
  u.input_tokens = 3;  // the reply's priming
  for (const Message& m : prompt) u.input_tokens += 3 + estimate_tokens(m.content);
  u.reasoning_tokens = thinking.empty() ? 0 : estimate_tokens(thinking);
  u.output_tokens = estimate_tokens(text) + u.reasoning_tokens;
  u.estimated = true;
  return u;
}

std::string estimated_usage_text(int64_t tokens, double cost_usd) {
  return fmt::format(
      "usage estimated: the server reported none, so the {} tokens and ${:.4f} were counted "
      "from the text (3 bytes a token); --max-tokens and --max-cost bind on these",
      tokens, cost_usd);
}

}  // namespace llm
