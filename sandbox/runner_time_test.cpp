// sandbox/runner_time_test.cpp: the judge's rule for the times a runner claims.
#include <doctest/doctest.h>

#include "sandbox/rank/runner_link.h"

namespace sandbox::rank {

namespace {
RunnerLink calibrated() {
  // 32 empty calls: overheads of 160 us, a few of 165-170 us.
  std::vector<double> over(32, 0.160);
  over[29] = over[30] = 0.165;
  over[31] = 0.170;
  RunnerLink l;
  set_overheads(&l, over);
  return l;
}
}  // namespace

TEST_CASE("runner time: the calibration gives the median overhead and the limit") {
  RunnerLink l = calibrated();
  CHECK(l.calibrated);
  CHECK(l.o_med_ms == doctest::Approx(0.160));
  CHECK(l.limit_ms == doctest::Approx(0.020));  // no p10-p90 spread: the floor
  std::vector<double> noisy = {0.150, 0.155, 0.160, 0.160, 0.170,
                               0.200, 0.210, 0.230, 0.240, 0.300};
  set_overheads(&l, noisy);
  CHECK(l.limit_ms == doctest::Approx(2 * (0.300 - 0.155)));
}

TEST_CASE("runner time: honest claims stand, however noisy one sample is") {
  RunnerLink l = calibrated();
  RunnerCall rc;
  rc.reply.ms = 0.500;
  rc.reply.off_stream = 1;
  rc.round_trip_ms = 0.700;  // a slow context switch on this one
  Timed t = judge_time(l, rc);
  CHECK(t.ms == doctest::Approx(0.500));
  CHECK(t.off_stream);
  CHECK(t.overhead_ms == doctest::Approx(0.200));

  std::vector<double> ms = {0.500, 0.501, 0.499, 0.500, 0.502};
  std::vector<double> over = {0.200, 0.161, 0.158, 0.165, 0.170};  // median 0.165
  CHECK_FALSE(refute_claims(l, 1, &ms, over));
  CHECK(ms[0] == doctest::Approx(0.500));
}

TEST_CASE("runner time: claims shaved by more than the limit are all replaced") {
  RunnerLink l = calibrated();
  // The work takes 0.5 ms; the claims say 0.004 ms.
  std::vector<double> ms(5, 0.004);
  std::vector<double> over = {0.656, 0.658, 0.655, 0.660, 0.657};
  REQUIRE(refute_claims(l, 1, &ms, over));
  for (double m : ms) CHECK(m == doctest::Approx(0.5).epsilon(0.01));

  // Batched: 10 calls a sample, claims per call; the replacement is per call too.
  std::vector<double> per_call(3, 0.0004);
  std::vector<double> batch_over = {5.156, 5.157, 5.155};  // 10 x 0.5 ms, less 0.004 claimed
  REQUIRE(refute_claims(l, 10, &per_call, batch_over));
  CHECK(per_call[0] == doctest::Approx(0.5).epsilon(0.01));

  // Shaved by less than the limit: unnoticed, and that is the most a forger gains.
  std::vector<double> shaved(5, 0.485);
  std::vector<double> shaved_over(5, 0.175);
  CHECK_FALSE(refute_claims(l, 1, &shaved, shaved_over));
}

TEST_CASE("runner time: nothing is judged before calibration (no timing phase)") {
  RunnerLink l;
  std::vector<double> ms = {0.004};
  CHECK_FALSE(refute_claims(l, 1, &ms, {5.0}));
}

}  // namespace sandbox::rank
