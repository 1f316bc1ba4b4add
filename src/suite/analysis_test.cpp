// suite/analysis_test.cpp: the cost model's numbers against hand-computed values, the
// rankings they imply, and the analysis text's claims.
#include "suite/analysis.h"

#include <doctest/doctest.h>

#include "kf_build_paths.h"
#include "suite/shipped_test_util.h"
#include "tests/has.h"

using suite::test::full_instance;
using suite::test::shipped_problem;
using suite::test::template_named;

TEST_CASE("builtin: all_reduce two-shot at world 2, 4 MiB, by hand") {
  suite::Problem p = shipped_problem("all_reduce");
  suite::Instance inst = full_instance(p, 2, {"n=1048576"});
  auto space = suite::template_space(p, inst, sandbox::Backend::cuda);
  suite::Prediction r = suite::predict(template_named(space, "reg/two_shot blocks=32 threads=512"),
                                       inst, suite::default_h200());
  const double S = 4194304;  // 2^20 fp32
  // 2^19 elements per part / 4 per vector / 512 threads = 256 blocks wanted, 32 allowed.
  CHECK(r.blocks == 32);
  CHECK(r.bw_gbps == doctest::Approx(342.68 * 32 / 76));
  CHECK(r.comm_bytes == doctest::Approx(S));  // 2(w-1)/w S
  CHECK(r.hbm_bytes == doctest::Approx(2 * S));
  const double comm_ms = S / (342.68e9 * 32 / 76) * 1e3;
  CHECK(r.comm_ms == doctest::Approx(comm_ms));
  CHECK(r.mem_ms == doctest::Approx(2 * S / 4300e9 * 1e3));
  // one launch (5 µs) + 2 barriers (2.5 µs) + 3 link traversals (0.75 µs)
  CHECK(r.ms == doctest::Approx(0.005 + 0.005 + 0.00225 + comm_ms));
  CHECK(r.bound == "comm");
  CHECK(suite::predict_ms(template_named(space, "reg/two_shot blocks=32 threads=512"), inst,
                          suite::default_h200()) == doctest::Approx(r.ms));
}

TEST_CASE("builtin: more blocks help register ops up to ~76 SMs, threads scale the SM share") {
  suite::Problem p = shipped_problem("reduce_scatter");
  suite::Instance inst = full_instance(p, 8, {"n=4194304"});
  auto space = suite::template_space(p, inst, sandbox::Backend::cuda);
  const suite::Machine m = suite::default_h200();
  const auto b8 = suite::predict(template_named(space, "reg/pull blocks=8 threads=512"), inst, m);
  const auto b64 = suite::predict(template_named(space, "reg/pull blocks=64 threads=512"), inst, m);
  const auto b128 =
      suite::predict(template_named(space, "reg/pull blocks=128 threads=512"), inst, m);
  const auto h64 = suite::predict(template_named(space, "reg/pull blocks=64 threads=256"), inst, m);
  CHECK(b8.bw_gbps == doctest::Approx(342.68 * 8 / 76));
  CHECK(b128.bw_gbps == doctest::Approx(342.68));  // saturated
  CHECK(h64.bw_gbps == doctest::Approx(342.68 * 32 / 76));
  CHECK(b64.ms < b8.ms);
  CHECK(b128.ms < b64.ms);
}

TEST_CASE("builtin: one-shot wins small all_reduce at world 4, two-shot wins large") {
  suite::Problem p = shipped_problem("all_reduce");
  const suite::Machine m = suite::default_h200();
  auto best_family = [&](int64_t n) {
    suite::Instance inst = full_instance(p, 4, {"n=" + std::to_string(n)});
    return suite::rank_templates(suite::template_space(p, inst, sandbox::Backend::cuda), inst, m)[0]
        .tmpl.algo;
  };
  CHECK(best_family(256) == "one_shot");       // 1 KiB: latency, one-shot has fewer hops
  CHECK(best_family(16 << 20) == "two_shot");  // 64 MiB: (w-1) S vs 2(w-1)/w S
}

TEST_CASE("builtin: the copy engine loses at MiB sizes and nears its peak at 256 MB") {
  suite::Problem p = shipped_problem("all_gather");
  const suite::Machine m = suite::default_h200();
  suite::Instance small = full_instance(p, 2, {"n=1048576"});
  auto space = suite::template_space(p, small, sandbox::Backend::cuda);
  const auto ce = suite::predict(template_named(space, "ce/push"), small, m);
  const auto tma =
      suite::predict(template_named(space, "tma/push blocks=16 chunk_bytes=16384"), small, m);
  CHECK(ce.ms > tma.ms);
  CHECK(ce.kernels == 2);
  CHECK(ce.ce_calls == 2);  // one copy per destination, ours included
  // 4 MiB per call: 368.82 * s / (s + 256 MiB / 9)
  CHECK(ce.bw_gbps == doctest::Approx(368.82 * 4194304.0 / (4194304.0 + 268435456.0 / 9)));
  suite::Instance huge = full_instance(p, 2, {"n=67108864"});  // 256 MiB per rank
  CHECK(suite::predict(template_named(space, "ce/push"), huge, m).bw_gbps ==
        doctest::Approx(0.9 * 368.82));
  // TMA: 15 SMs saturate it
  CHECK(tma.bw_gbps == doctest::Approx(350.01));
  CHECK(suite::predict(template_named(space, "tma/push blocks=8 chunk_bytes=16384"), small, m)
            .bw_gbps == doctest::Approx(350.01 * 8 / 15));
}

TEST_CASE("builtin: broadcast relay halves the root's link bytes at world 8") {
  suite::Problem p = shipped_problem("broadcast");
  suite::Instance inst = full_instance(p, 8, {"n=16777216"});
  auto space = suite::template_space(p, inst, sandbox::Backend::cuda);
  const suite::Machine m = suite::default_h200();
  const auto pull =
      suite::predict(template_named(space, "reg/pull blocks=128 threads=512"), inst, m);
  const auto relay =
      suite::predict(template_named(space, "reg/relay blocks=128 threads=512"), inst, m);
  const double S = 16777216.0 * 4;
  CHECK(pull.comm_bytes == doctest::Approx(7 * S));
  CHECK(relay.comm_bytes == doctest::Approx(2.0 * 7 / 8 * S));
  CHECK(relay.ms < pull.ms);
}

TEST_CASE("builtin: world 1 moves nothing and is latency-bound; the ranking is sorted") {
  suite::Problem p = shipped_problem("all_to_all");
  suite::Instance inst = full_instance(p, 1, {"n=1024"});
  auto ranked = suite::rank_templates(suite::template_space(p, inst, sandbox::Backend::cuda), inst,
                                      suite::default_h200());
  REQUIRE(!ranked.empty());
  for (size_t i = 0; i < ranked.size(); ++i) {
    CHECK(ranked[i].comm_bytes == 0);
    CHECK(ranked[i].hops == 0);
    CHECK(ranked[i].bound == "latency");
    if (i > 0) CHECK(ranked[i - 1].ms <= ranked[i].ms);
  }
}

TEST_CASE("builtin: the analysis names bytes, floor, regime, rule and predictions with sources") {
  const suite::Machine m = suite::default_h200();
  suite::Problem ar = shipped_problem("all_reduce");
  const std::string small = suite::analysis_text(ar, full_instance(ar, 2, {"n=1024"}), m);
  CHECK(has(small, "latency-bound"));
  CHECK(has(small, "picks one-shot"));
  CHECK(has(small, "[PK]"));
  CHECK(has(small, "[vLLM]"));
  CHECK(has(small, "[here]"));
  CHECK(has(small, "450 GB/s"));
  CHECK(has(small, "do not measure speed"));
  CHECK(has(small, "Predicted (cost model"));
  CHECK(has(small, "reg/one_shot"));
  const std::string big = suite::analysis_text(ar, full_instance(ar, 8, {"n=16777216"}), m);
  CHECK(has(big, "bandwidth-bound"));
  CHECK(has(big, "picks two-shot"));
  CHECK(has(big, "64.00 MiB per rank"));
  suite::Problem bc = shipped_problem("broadcast");
  CHECK(has(suite::analysis_text(bc, full_instance(bc, 4, {}), m), "relay"));
}
