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

TEST_CASE("runner time: an audit batch is long enough that its noise is half the bound") {
  // 20 us claims, 20 us round-trip limit: 0.6 us bound, 0.3 us noise -> 67 calls.
  CHECK(audit_calls(0.020, 0.020, 0.020) == 67);
  // A 1 ms kernel needs few; a forged 1 us claim of a 5 ms kernel buys no 256 x 5 ms.
  CHECK(audit_calls(0.020, 1.0, 1.0) == 8);
  CHECK(audit_calls(0.020, 0.001, 5.0) == 20);
  CHECK(audit_calls(0.500, 0.001, 0.001) == 256);
  // The bound: 3% or 0.5 us, or the audit's noise; on the host half the audited time.
  CHECK(audit_bound_ms(0.020, 0.020, 67, false) == doctest::Approx(0.0006));
  CHECK(audit_bound_ms(0.005, 0.020, 80, false) == doctest::Approx(0.0005));
  CHECK(audit_bound_ms(1.0, 0.020, 8, false) == doctest::Approx(0.030));
  CHECK(audit_bound_ms(2.0, 0.5, 100, true) == doctest::Approx(1.0));
}

namespace {
TimeAudit audited(double ms, double bound) {
  TimeAudit a;
  a.batches = 3;
  a.calls = 67;
  a.audited_ms = ms;
  a.bound_ms = bound;
  return a;
}
}  // namespace

TEST_CASE("runner time: honest claims at or above the audited time stand untouched") {
  // Isolated calls (L2 flushed, launch not overlapped) are slower than back-to-back ones.
  std::vector<double> ms = {0.0205, 0.0210, 0.0199, 0.0202, 0.0215};
  TimeAudit a = audited(0.0200, 0.0006);
  hold_claims(&ms, &a);
  CHECK(a.check == TimeCheck::confirmed);
  CHECK(a.raised == 0);
  CHECK(a.claimed_ms == doctest::Approx(0.0205));
  CHECK(ms[2] == doctest::Approx(0.0199));
}

TEST_CASE("runner time: 15 us shaved off a 20 us kernel's claims is refuted and raised") {
  // The H100 case of issue 33: 0.0041-0.0053 ms claimed, 0.020 ms by the judge's clock.
  std::vector<double> ms = {0.0041, 0.0053, 0.0049, 0.0050, 0.0047};
  TimeAudit a = audited(0.0200, 0.0006);
  hold_claims(&ms, &a);
  CHECK(a.check == TimeCheck::refuted);
  CHECK(a.raised == 5);
  CHECK(a.claimed_ms == doctest::Approx(0.0049));
  for (double m : ms) CHECK(m == doctest::Approx(0.0200));
  // 0.7 us shaved: just past the bound, refuted too; 0.5 us: within it, stands.
  std::vector<double> near(5, 0.0193), within(5, 0.0195);
  TimeAudit b = audited(0.0200, 0.0006), c = b;
  hold_claims(&near, &b);
  hold_claims(&within, &c);
  CHECK(b.check == TimeCheck::refuted);
  CHECK(c.check == TimeCheck::confirmed);
}

TEST_CASE("runner time: a minority of forged claims is raised; the median stands") {
  std::vector<double> ms = {0.0210, 0.0040, 0.0208, 0.0042, 0.0212};
  TimeAudit a = audited(0.0200, 0.0006);
  hold_claims(&ms, &a);
  CHECK(a.check == TimeCheck::confirmed);
  CHECK(a.raised == 2);
  CHECK(ms[1] == doctest::Approx(0.0200));
  CHECK(ms[0] == doctest::Approx(0.0210));
  // No audit (in the judge, under a profiler): nothing is judged.
  TimeAudit none;
  std::vector<double> forged = {0.001};
  hold_claims(&forged, &none);
  CHECK(none.check == TimeCheck::unaudited);
  CHECK(forged[0] == doctest::Approx(0.001));
}

}  // namespace sandbox::rank
