#include "llm/retry.h"

#include <doctest/doctest.h>

namespace llm {

TEST_CASE("llm retry: which statuses are retried") {
  Headers none;
  CHECK(should_retry(408, none, false));
  CHECK(should_retry(409, none, false));
  CHECK(should_retry(429, none, false));
  CHECK(should_retry(500, none, false));
  CHECK(should_retry(503, none, false));
  CHECK(should_retry(529, none, false));
  CHECK_FALSE(should_retry(400, none, false));
  CHECK_FALSE(should_retry(401, none, false));
  CHECK_FALSE(should_retry(404, none, false));
  CHECK(should_retry(0, none, true));
  CHECK_FALSE(should_retry(0, none, false));
}

TEST_CASE("llm retry: x-should-retry overrides the status") {
  CHECK_FALSE(should_retry(500, {{"x-should-retry", "false"}}, false));
  CHECK(should_retry(400, {{"x-should-retry", "true"}}, false));
  CHECK(should_retry(429, {{"x-should-retry", "maybe"}}, false));
}

TEST_CASE("llm retry: retry-after-ms, retry-after seconds and HTTP-date") {
  RetryPolicy p;
  CHECK(retry_delay(p, 0, {{"retry-after-ms", "250"}}, 0.5, 0) == doctest::Approx(0.25));
  CHECK(retry_delay(p, 0, {{"retry-after", "1.5"}}, 0.5, 0) == doctest::Approx(1.5));
  // retry-after-ms wins over retry-after.
  CHECK(retry_delay(p, 0, {{"retry-after-ms", "100"}, {"retry-after", "5"}}, 0, 0) ==
        doctest::Approx(0.1));
  // Sun, 06 Nov 1994 08:49:37 GMT is 784111777.
  Headers date = {{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}};
  CHECK(retry_after_seconds(date, 784111777 - 3) == doctest::Approx(3));
  CHECK(retry_delay(p, 0, date, 0, 784111777 - 3) == doctest::Approx(3));
  CHECK(retry_after_seconds({{"retry-after", "soon"}}, 0) < 0);
}

TEST_CASE("llm retry: back-off doubles, is capped, and jitter only shrinks it") {
  RetryPolicy p;
  Headers none;
  CHECK(retry_delay(p, 0, none, 0, 0) == doctest::Approx(0.5));
  CHECK(retry_delay(p, 1, none, 0, 0) == doctest::Approx(1.0));
  CHECK(retry_delay(p, 2, none, 0, 0) == doctest::Approx(2.0));
  CHECK(retry_delay(p, 10, none, 0, 0) == doctest::Approx(8.0));
  CHECK(retry_delay(p, 0, none, 1.0, 0) == doctest::Approx(0.375));
  CHECK(retry_delay(p, 0, none, 0.5, 0) == doctest::Approx(0.4375));
}

TEST_CASE("llm retry: retry-after of 0 or beyond the limit falls back to back-off") {
  RetryPolicy p;
  CHECK(retry_delay(p, 0, {{"retry-after", "0"}}, 0, 0) == doctest::Approx(0.5));
  CHECK(retry_delay(p, 1, {{"retry-after", "61"}}, 0, 0) == doctest::Approx(1.0));
  p.max_retry_after_s = 120;
  CHECK(retry_delay(p, 1, {{"retry-after", "61"}}, 0, 0) == doctest::Approx(61));
}

}  // namespace llm
