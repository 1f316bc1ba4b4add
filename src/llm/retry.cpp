// src/llm/retry.cpp: see retry.h.
#include "llm/retry.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace llm {

namespace {

const std::string* find(const Headers& h, const char* name) {
  auto it = h.find(name);
  return it == h.end() ? nullptr : &it->second;
}

// A whole string as a finite, non-negative number, or -1.
double parse_number(const std::string& s) {
  if (s.empty()) return -1;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  while (end && (*end == ' ' || *end == '\t')) ++end;
  if (end == s.c_str() || (end && *end) || !std::isfinite(v) || v < 0) return -1;
  return v;
}

// An IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") as seconds since the epoch, or -1.
double parse_http_date(const std::string& s) {
  struct tm tm;
  std::memset(&tm, 0, sizeof tm);
  const char* end = strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S", &tm);
  if (!end) return -1;
  return static_cast<double>(timegm(&tm));
}

}  // namespace

bool should_retry(int status, const Headers& headers, bool connection_error) {
  // The server knows best: the SDKs obey this header before anything else.
  if (const std::string* v = find(headers, "x-should-retry")) {
    if (*v == "true") return true;
    if (*v == "false") return false;
  }
  if (status == 0) return connection_error;
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

double retry_after_seconds(const Headers& headers, std::time_t now) {
  if (const std::string* v = find(headers, "retry-after-ms")) {
    double ms = parse_number(*v);
    if (ms >= 0) return ms / 1000.0;
  }
  if (const std::string* v = find(headers, "retry-after")) {
    double s = parse_number(*v);
    if (s >= 0) return s;
    double when = parse_http_date(*v);
    if (when >= 0) return std::max(0.0, when - static_cast<double>(now));
  }
  return -1;
}

double retry_delay(const RetryPolicy& policy, int retries_done, const Headers& headers,
                   double rand01, std::time_t now) {
  double after = retry_after_seconds(headers, now);
  // As the SDKs do: 0 (or negative) falls through to the back-off, and so does a value
  // too long to wait for in an interactive tool.
  if (after > 0 && after <= policy.max_retry_after_s) return after;
  int n = std::clamp(retries_done, 0, 1000);
  double backoff = std::min(policy.base_s * std::pow(2.0, n), policy.cap_s);
  double d = backoff * (1.0 - policy.jitter * std::clamp(rand01, 0.0, 1.0));
  return std::max(0.0, d);
}

}  // namespace llm
