// src/llm/client.cpp: see client.h.
#include "llm/client.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <random>
#include <thread>

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
      if (e.retryable)
        err->message += fmt::format(" (gave up after {} attempts; retries: retry.max_retries)",
                                    reply->attempts);
      return done(false);
    }
    double wait = retry_delay(cfg.retry, retries, headers,
                              cfg.rand01 ? cfg.rand01() : real_rand01(), std::time(nullptr));
    if (req.on_retry) req.on_retry(reply->attempts + 1, e);
    (cfg.sleep ? cfg.sleep : real_sleep)(wait);
  }
}

}  // namespace llm

namespace llm {

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

}  // namespace llm
