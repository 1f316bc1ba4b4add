// src/sweep/metrics_test.cpp: pass@k and fast_p@k against hand computations.
#include "sweep/metrics.h"

#include <doctest/doctest.h>

#include <cmath>

namespace sweep {

TEST_CASE("metrics: pass@k from n = 4 samples, every c and k, by hand") {
  // 1 - C(4-c, k) / C(4, k); C(4,1)=4, C(4,2)=6, C(4,4)=1.
  CHECK(pass_at_k(4, 0, 1) == 0);
  CHECK(pass_at_k(4, 1, 1) == doctest::Approx(0.25));       // 1 - 3/4
  CHECK(pass_at_k(4, 1, 2) == doctest::Approx(0.5));        // 1 - C(3,2)/6 = 1 - 3/6
  CHECK(pass_at_k(4, 1, 4) == doctest::Approx(1.0));        // 1 - 0
  CHECK(pass_at_k(4, 2, 1) == doctest::Approx(0.5));        // 1 - 2/4
  CHECK(pass_at_k(4, 2, 2) == doctest::Approx(5.0 / 6.0));  // 1 - C(2,2)/6 = 1 - 1/6
  CHECK(pass_at_k(4, 3, 1) == doctest::Approx(0.75));
  CHECK(pass_at_k(4, 3, 2) == doctest::Approx(1.0));  // n - c < k
  CHECK(pass_at_k(4, 4, 1) == doctest::Approx(1.0));
  CHECK(pass_at_k(4, 0, 2) == 0);
  CHECK(pass_at_k(4, 0, 4) == 0);
  CHECK(pass_at_k(4, 2, 4) == doctest::Approx(1.0));
  CHECK(pass_at_k(4, 3, 4) == doctest::Approx(1.0));
  CHECK(pass_at_k(4, 4, 2) == doctest::Approx(1.0));
  CHECK(pass_at_k(4, 4, 4) == doctest::Approx(1.0));
  // n = 5, c = 2, k = 2: 1 - C(3,2)/C(5,2) = 1 - 3/10.
  CHECK(pass_at_k(5, 2, 2) == doctest::Approx(0.7));
}

TEST_CASE("metrics: pass@k stays exact where binomials would overflow") {
  // n = 200, c = 1: pass@k = k / n exactly.
  CHECK(pass_at_k(200, 1, 1) == doctest::Approx(0.005));
  CHECK(pass_at_k(200, 1, 100) == doctest::Approx(0.5));
  CHECK(pass_at_k(200, 100, 64) > 0.999999);
}

TEST_CASE("metrics: the ks are the powers of two up to n, and n") {
  CHECK(ks_up_to(4) == std::vector<int>{1, 2, 4});
  CHECK(ks_up_to(6) == std::vector<int>{1, 2, 4, 6});
  CHECK(ks_up_to(1) == std::vector<int>{1});
  CHECK(ks_up_to(0).empty());
}

TEST_CASE("metrics: fast_p@k, the geometric mean and the cost to the first correct kernel") {
  std::vector<SampleOutcome> s(4);
  s[0] = {true, 2.5, 1, 1000, 0.01};
  s[1] = {true, 1.2, 3, 5000, 0.05};
  s[2] = {false, std::nullopt, -1, 0, 0};
  s[3] = {true, 0.8, 2, 3000, 0.03};
  Metrics m = compute_metrics(s);
  CHECK(m.n == 4);
  CHECK(m.correct == 3);
  REQUIRE(m.pass.size() == 3);
  CHECK(m.pass[0].value == doctest::Approx(0.75));
  REQUIRE(m.speed_measured);
  REQUIRE(m.fast.size() == 3);
  CHECK(m.fast[0].count == 2);  // 2.5 and 1.2 reach 1.0x
  CHECK(m.fast[0].at_k[0].value == doctest::Approx(0.5));
  CHECK(m.fast[1].count == 1);  // only 2.5 reaches 1.5x
  CHECK(m.fast[1].at_k[0].value == doctest::Approx(0.25));
  CHECK(m.fast[2].count == 1);
  CHECK(m.fast[2].at_k[1].value == doctest::Approx(0.5));  // 1 - C(3,2)/C(4,2)
  REQUIRE(m.geomean_speedup);
  CHECK(*m.geomean_speedup == doctest::Approx(std::cbrt(2.5 * 1.2 * 0.8)));
  CHECK(*m.turns_to_correct == doctest::Approx(2.0));
  CHECK(*m.tokens_to_correct == doctest::Approx(3000.0));
  CHECK(*m.cost_to_correct == doctest::Approx(0.03));
}

TEST_CASE("metrics: no speed measured (host backend, emulated ranks) means no fast_p") {
  std::vector<SampleOutcome> s(2);
  s[0].correct = true;
  s[0].turns_to_correct = 1;
  Metrics m = compute_metrics(s);
  CHECK_FALSE(m.speed_measured);
  CHECK(m.fast.empty());
  CHECK_FALSE(m.geomean_speedup);
  CHECK(m.pass[0].value == doctest::Approx(0.5));
}

TEST_CASE("metrics: a speedup the timing audit refuted counts as correct, not as fast") {
  std::vector<SampleOutcome> s(2);
  s[0].correct = s[1].correct = true;
  s[0].speedup = 2.5;
  s[1].speedup = 2.9;  // claimed by a forged timer
  s[1].speed_confirmed = false;
  Metrics m = compute_metrics(s);
  CHECK(m.correct == 2);
  REQUIRE(m.fast.size() == 3);
  CHECK(m.fast[0].count == 1);
  CHECK(m.fast[2].count == 1);
  REQUIRE(m.geomean_speedup);
  CHECK(*m.geomean_speedup == doctest::Approx(2.5));
}

}  // namespace sweep
