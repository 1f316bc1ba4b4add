#include "stats.h"

#include <doctest/doctest.h>

using namespace sandbox;

TEST_CASE("stats: median, quantiles and extremes of unsorted times") {
  TimeStats s = time_stats({5, 1, 4, 2, 3});
  CHECK(s.n == 5);
  CHECK(s.median_ms == 3);
  CHECK(s.min_ms == 1);
  CHECK(s.max_ms == 5);
  CHECK(s.p10_ms == doctest::Approx(1.4));
  CHECK(s.p90_ms == doctest::Approx(4.6));
}

TEST_CASE("stats: the median of an even count is the mean of the middle two") {
  CHECK(time_stats({4, 1, 3, 2}).median_ms == doctest::Approx(2.5));
  CHECK(time_stats({7}).median_ms == 7);
  CHECK(time_stats({7}).p90_ms == 7);
}

TEST_CASE("stats: no times give zeros") {
  TimeStats s = time_stats({});
  CHECK(s.n == 0);
  CHECK(s.median_ms == 0);
}
