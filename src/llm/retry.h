// src/llm/retry.h: the official OpenAI and Anthropic SDKs' retry policy, as pure
// functions so that it is tested without a network or a clock.
//   - x-should-retry: true|false decides first;
//   - then 408, 409, 429, >= 500 and connection errors (time-outs included) are retried;
//   - the wait is retry-after-ms, else retry-after (seconds, fractions allowed, or an
//     HTTP-date), when 0 < it <= max_retry_after_s; otherwise
//     min(base * 2^n, cap) * (1 - jitter * rand), n = retries already made.
#pragma once

#include <ctime>
#include <map>
#include <string>

namespace llm {

// Response headers with lowercase names (HTTP names are case-insensitive).
using Headers = std::map<std::string, std::string>;

struct RetryPolicy {
  int max_retries = 2;            // retries after the first attempt (the SDKs' default)
  double base_s = 0.5;            // first back-off
  double cap_s = 8;               // longest back-off
  double jitter = 0.25;           // the back-off shrinks by up to this fraction
  double max_retry_after_s = 60;  // a longer retry-after is ignored (Anthropic SDK: 60)
};

// status 0 means no HTTP response (connection_error then says whether the transport
// failed in a way worth retrying).
bool should_retry(int status, const Headers& headers, bool connection_error);

// Seconds to wait before retry number retries_done + 1. rand01 is in [0, 1); now is
// the current time, for an HTTP-date retry-after.
double retry_delay(const RetryPolicy& policy, int retries_done, const Headers& headers,
                   double rand01, std::time_t now);

// The retry-after the headers ask for in seconds, or a negative number when they ask
// for none (or say something unreadable).
double retry_after_seconds(const Headers& headers, std::time_t now);

}  // namespace llm
