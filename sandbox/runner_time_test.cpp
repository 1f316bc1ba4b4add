// sandbox/runner_time_test.cpp: the judge's rule for the times a runner claims.
#include <doctest/doctest.h>

#include "sandbox/rank/runner_link.h"

namespace sandbox::rank {

namespace {
RunnerCall reply(double claimed_ms, double round_trip_ms, bool off_stream = false) {
  RunnerCall rc;
  rc.replied = true;
  rc.reply.ms = claimed_ms;
  rc.reply.off_stream = off_stream ? 1 : 0;
  rc.round_trip_ms = round_trip_ms;
  return rc;
}

RunnerLink calibrated() {
  // 32 empty calls: overheads of 25 us, a few of 26-27 us.
  std::vector<double> over(32, 0.025);
  over[29] = over[30] = 0.026;
  over[31] = 0.027;
  RunnerLink l;
  set_overheads(&l, over);
  return l;
}
}  // namespace

TEST_CASE("runner time: the margins come from the calibration's overheads") {
  RunnerLink l = calibrated();
  CHECK(l.calibrated);
  CHECK(l.o_med_ms == doctest::Approx(0.025));
  // The 90th percentile is 0.025 with no spread below it: the high mark is 5 us above.
  CHECK(l.o_hi_ms >= l.o_med_ms + 0.005);
  CHECK(l.o_hi_ms < l.o_med_ms + 0.010);
}

TEST_CASE("runner time: an honest claim stands; a forged one is replaced and counted") {
  RunnerLink l = calibrated();
  Timed honest = judge_time(l, reply(0.500, 0.525, true));
  CHECK(honest.ms == doctest::Approx(0.500));
  CHECK(honest.off_stream);
  CHECK_FALSE(honest.unconfirmed);

  // Claimed far below what the round trip allows: the judge's own estimate instead.
  Timed forged = judge_time(l, reply(0.004, 0.525));
  CHECK(forged.unconfirmed);
  CHECK(forged.ms == doctest::Approx(0.500));

  // Longer than the round trip it happened in: impossible, replaced too.
  Timed too_long = judge_time(l, reply(0.700, 0.525));
  CHECK(too_long.unconfirmed);
  CHECK(too_long.ms == doctest::Approx(0.500));

  // The most a forger can take off unrefuted is the margin o_hi - o_med.
  Timed edge = judge_time(l, reply(0.525 - l.o_hi_ms, 0.525));
  CHECK_FALSE(edge.unconfirmed);
  CHECK(0.500 - edge.ms <= l.o_hi_ms - l.o_med_ms + 1e-12);
}

TEST_CASE("runner time: before calibration (no timing phase) the claim is taken as it is") {
  RunnerLink l;
  Timed t = judge_time(l, reply(0.1, 5.0));
  CHECK(t.ms == doctest::Approx(0.1));
  CHECK_FALSE(t.unconfirmed);
}

}  // namespace sandbox::rank
