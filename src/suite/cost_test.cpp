#include "suite/cost.h"

#include <doctest/doctest.h>

#include "suite/test_util.h"

using suite::test::all_reduce_json;
using suite::test::TempDir;
using suite::test::write_problem;

namespace {
suite::Instance all_reduce(int world, std::vector<std::string> overrides = {}) {
  TempDir tmp;
  std::string dir = write_problem(tmp.path, "all_reduce", all_reduce_json().dump());
  suite::Problem p;
  suite::Instance inst;
  std::string err;
  REQUIRE_MESSAGE(suite::load_problem(dir, &p, &err), err);
  REQUIRE_MESSAGE(suite::resolve_instance(p, world, "full", overrides, &inst, &err), err);
  return inst;
}
}  // namespace

TEST_CASE("suite: cost of all_reduce n=1048576 fp32 at world 8") {
  suite::Instance inst = all_reduce(8);
  CHECK(inst.busbw_bytes == 4 * 1048576);    // 4 MiB
  CHECK(inst.busbw_factor == 1.75);          // 2 * 7 / 8
  CHECK(inst.comm_bytes == 1.75 * 4194304);  // 7340032
  CHECK(inst.hbm_bytes == 9 * 4194304.0);
  CHECK(inst.flops == 7 * 1048576.0);

  suite::Machine m = suite::default_h200();
  suite::Roofline r = suite::roofline(inst, m);
  CHECK(r.comm_ms == doctest::Approx(7340032.0 / 450e9 * 1e3));     // 0.01631 ms
  CHECK(r.hbm_ms == doctest::Approx(37748736.0 / 4300e9 * 1e3));    // 0.00878 ms
  CHECK(r.compute_ms == doctest::Approx(7340032.0 / 67e12 * 1e3));  // fp32 rate
  CHECK(r.floor_ms == r.comm_ms);
  CHECK(r.bound == "comm");

  // 4 MiB in 20 us: algbw 209.7 GB/s, busbw 367.0 GB/s.
  CHECK(suite::algbw_gbps(inst, 0.02) == doctest::Approx(209.7152));
  CHECK(suite::busbw_gbps(inst, 0.02) == doctest::Approx(367.0016));
  CHECK(suite::busbw_gbps(inst, 0) == 0);
  CHECK(suite::pct_of_roofline(r.floor_ms, 0.02) == doctest::Approx(81.5557).epsilon(1e-4));
  CHECK(suite::pct_of_roofline(r.floor_ms, 0) == 0);
}

TEST_CASE("suite: roofline at world 1 and in bf16") {
  suite::Machine m = suite::default_h200();
  suite::Instance one = all_reduce(1);
  suite::Roofline r = suite::roofline(one, m);
  CHECK(r.comm_ms == 0);
  CHECK(r.hbm_ms == doctest::Approx(2 * 4194304.0 / 4300e9 * 1e3));
  CHECK(r.bound == "hbm");
  CHECK(suite::busbw_gbps(one, 0.01) == 0);  // factor 0 at world 1

  suite::Instance bf = all_reduce(2, {"dtype=bf16"});
  suite::Roofline rb = suite::roofline(bf, m);
  CHECK(rb.compute_ms == doctest::Approx(1048576.0 / 989e12 * 1e3));
  CHECK(rb.comm_ms == doctest::Approx(2097152.0 / 450e9 * 1e3));

  suite::Instance none;
  CHECK(suite::roofline(none, m).bound == "none");
  CHECK(suite::flops_rate(kf::DType::e4m3, m) == 1979e12);
  CHECK(suite::flops_rate(kf::DType::i32, m) == 67e12);
}
