// suite/fused_predictions_test.cpp: the fused GEMM + collective problems' search.json
// through the cost model, one template of each against numbers worked out by hand from
// the shapes (H200 defaults: NVLink 450 GB/s, HBM 4300 GB/s, bf16 989 TFLOP/s, 132 SMs;
// launch 5 µs, barrier 2.5 µs, hop 0.75 µs), and the space each search walks.
#include <doctest/doctest.h>

#include "kf_build_paths.h"
#include "suite/analysis.h"
#include "suite/shipped_test_util.h"

using suite::test::full_instance;
using suite::test::shipped_problem;
using suite::test::template_named;

TEST_CASE("suite: gemm_reduce_scatter's intra-SM template at world 8, full size, by hand") {
  suite::Problem p = shipped_problem("gemm_reduce_scatter");
  suite::Instance inst = full_instance(p, 8);
  const auto space = suite::template_space(p, inst, sandbox::Backend::cuda);
  CHECK(space.size() == 8);  // bm 64|128 x bn 64|128 x stages 2|3
  const suite::Template t = template_named(space, "tma/intra_sm bm=64 bn=128 stages=3");
  const suite::Prediction r = suite::predict(t, inst, suite::default_h200());
  REQUIRE(r.error.empty());
  // c is [1024/8, 1024] bf16 = 262144 B; a and b are 1024 x 64 and 64 x 1024 bf16.
  CHECK(r.comm_bytes == 7 * 262144.0);                 // 7 peers' slots of our tiles
  CHECK(r.hbm_bytes == 2 * 131072.0 + 17 * 262144.0);  // a, b, 8 slots in, 8 out, c
  // 16 x 8 = 128 tiles keep 128 of 132 blocks busy; each sends its own 16 KB tile.
  CHECK(r.blocks == 128);
  CHECK(r.bw_gbps == doctest::Approx(350.01));  // TMA saturated: 128 >= 15 SMs, 16 KB >= 2 KB
  CHECK(r.comm_ms == doctest::Approx(1835008 / 350.01e9 * 1e3));
  // 2 * 1024 * 1024 * 512 / 8 flops at 128/132 of 989 TFLOP/s: 0.14 µs
  CHECK(r.compute_ms == doctest::Approx(134217728 / (989e12 * 128 / 132) * 1e3));
  // one kernel, one barrier, one hop; the 5.24 µs of NVLink cover the math and HBM
  CHECK(r.ms == doctest::Approx(0.005 + 0.00325 + 0.0052427302));
  CHECK(r.bound == "latency");
  // A deep K makes the same template compute-bound: 2 * 1024^2 * 32768 flops per rank.
  suite::Instance deep = full_instance(p, 2, {"K=65536"});
  const suite::Prediction d = suite::predict(
      template_named(suite::template_space(p, deep, sandbox::Backend::cuda), t.name()), deep,
      suite::default_h200());
  CHECK(d.bound == "compute");
  CHECK(d.ms == doctest::Approx(0.00825 + 68719476736.0 / (989e12 * 128 / 132) * 1e3));
}

TEST_CASE("suite: all_gather_gemm's inter-SM template at world 8, full size, by hand") {
  suite::Problem p = shipped_problem("all_gather_gemm");
  suite::Instance inst = full_instance(p, 8);
  const auto space = suite::template_space(p, inst, sandbox::Backend::cuda);
  // bm 64|128 x comm_blocks 4|8|16 x TMA chunks 4|8|16 KB (a is 128 KB: all fit)
  CHECK(space.size() == 18);
  const suite::Template t =
      template_named(space, "tma/inter_sm bm=64 comm_blocks=8 chunk_bytes=16384");
  const suite::Prediction r = suite::predict(t, inst, suite::default_h200());
  REQUIRE(r.error.empty());
  // a is [1024, 64] bf16 = 131072 B, b [512, 1024] = 1 MiB, c [1024, 1024] = 2 MiB.
  CHECK(r.comm_bytes == 7 * 131072.0);
  CHECK(r.hbm_bytes == 15 * 131072.0 + 1048576 + 2097152);
  // 8 communication blocks push at 8/15 of TMA's saturated rate; 124 compute the 128 tiles.
  CHECK(r.blocks == 132);
  CHECK(r.bw_gbps == doctest::Approx(350.01 * 8 / 15));
  CHECK(r.compute_ms == doctest::Approx(1073741824 / (989e12 * 124 / 132) * 1e3));
  CHECK(r.ms == doctest::Approx(0.00825 + 917504 / 186.672e9 * 1e3));
  // 16 communication blocks saturate the link: the model ranks them first.
  const auto ranked = suite::rank_templates(space, inst, suite::default_h200());
  CHECK(ranked.front().tmpl.gemm.at(suite::Knob::comm_blocks) == 16);
  CHECK(ranked.front().ms < r.ms);
}

TEST_CASE("suite: the unfused host twin adds the GEMM to the exchange") {
  suite::Problem p = shipped_problem("gemm_reduce_scatter");
  suite::Instance inst = full_instance(p, 2);
  const auto space = suite::template_space(p, inst, sandbox::Backend::host);
  CHECK(space.size() == 4);  // pull|push x chunk_elems 1000|65536
  const suite::Prediction r = suite::predict(template_named(space, "host/pull chunk_elems=65536"),
                                             inst, suite::default_h200());
  REQUIRE(r.error.empty());
  // 2 * 1024^2 * 256 flops; c is [512, 1024] bf16 = 1 MiB: one peer's slot; 128 tiles over 128
  // blocks of register ops (342.68 GB/s past 76 SMs); two kernels, two barriers, two hops for a
  // pull.
  CHECK(r.kernels == 2);
  CHECK(r.compute_ms == doctest::Approx(536870912 / (989e12 * 128 / 132) * 1e3));
  CHECK(r.ms == doctest::Approx(0.010 + 0.0065 + r.compute_ms + 1048576 / 342.68e9 * 1e3));
}

TEST_CASE("suite: the fused problems' analysis carries the compute term and their advice") {
  for (const char* name : {"gemm_reduce_scatter", "all_gather_gemm"}) {
    suite::Problem p = shipped_problem(name);
    const std::string text = suite::analysis_text(p, full_instance(p, 8), suite::default_h200());
    INFO(text);
    CHECK(text.find("max(T_comm, T_mem, T_compute)") != std::string::npos);
    CHECK(text.find("- Algorithm: fuse ") != std::string::npos);
    CHECK(text.find("below it") != std::string::npos);  // K = 512 < 2197: comm stays exposed
    CHECK(text.find("- Predicted (cost model") != std::string::npos);
  }
}
