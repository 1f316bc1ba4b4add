#include "compare.h"

#include <doctest/doctest.h>

#include <cmath>

#include "inputs.h"

using namespace sandbox;

TEST_CASE("compare: unravel gives row-major indices") {
  CHECK(unravel(0, {2, 3}) == std::vector<int64_t>{0, 0});
  CHECK(unravel(4, {2, 3}) == std::vector<int64_t>{1, 1});
  CHECK(unravel(23, {2, 3, 4}) == std::vector<int64_t>{1, 2, 3});
  CHECK(index_string({1, 2}) == "[1, 2]");
}

TEST_CASE("compare: tolerance is atol + rtol * |want|") {
  Comparison c = compare_values({1.0, 2.1, 10.05}, {1.0, 2.0, 10.0}, {3}, 0.01, 0.01);
  CHECK(c.total == 3);
  CHECK(c.bad_count == 1);  // 2.1 vs 2.0: 0.1 > 0.01 + 0.02; 10.05: 0.05 <= 0.01 + 0.1
  REQUIRE(c.first_bad.size() == 1);
  CHECK(c.first_bad[0].index == std::vector<int64_t>{1});
  CHECK(c.first_bad[0].got == 2.1);
  CHECK(c.max_abs == doctest::Approx(0.1));
  CHECK(c.max_rel == doctest::Approx(0.05));
}

TEST_CASE("compare: NaN (the poison) always fails, infinities must match") {
  double inf = INFINITY;
  Comparison c = compare_values({NAN, inf, -inf, inf}, {NAN, inf, inf, 1.0}, {4}, 1, 1);
  CHECK(c.bad_count == 3);
  CHECK(c.first_bad[0].index[0] == 0);
  CHECK(c.first_bad[1].index[0] == 2);
  // The sandbox's poison bytes decode to NaN in every float type.
  for (kf::DType t : {kf::DType::f32, kf::DType::f16, kf::DType::bf16, kf::DType::f64,
                      kf::DType::e4m3, kf::DType::e5m2})
    CHECK(std::isnan(inputs::decode(~uint64_t{0}, t)));
}

TEST_CASE("compare: at most 8 bad elements are listed, all are counted") {
  std::vector<double> got(100, 1.0), want(100, 0.0);
  Comparison c = compare_values(got, want, {10, 10}, 0, 0);
  CHECK(c.bad_count == 100);
  CHECK(c.first_bad.size() == kMaxBad);
  CHECK(c.first_bad[7].index == std::vector<int64_t>{0, 7});
}

TEST_CASE("compare: inputs are compared bit for bit and described") {
  std::vector<uint8_t> want(8, 0), got(8, 0);
  inputs::store(want.data(), 1, kf::DType::f32, inputs::encode(1.5, kf::DType::f32));
  inputs::store(got.data(), 1, kf::DType::f32, inputs::encode(-0.0, kf::DType::f32));
  inputs::store(want.data(), 0, kf::DType::f32, inputs::encode(0.0, kf::DType::f32));
  Comparison c = compare_bits(got, want, kf::DType::f32, {2});
  CHECK(c.total == 2);
  CHECK(c.bad_count == 1);
  CHECK(c.first_bad[0].want == 1.5);
  Failure f;
  describe(c, "x", true, &f);
  CHECK(f.input_modified);
  CHECK(f.tensor == "x");
  CHECK(
      f.message ==
      "input 'x' was modified by kf_run: 1 of 2 elements changed; first at [1]: got -0, want 1.5");
  // -0.0 and 0.0 are equal values but different bits: an input check sees the change.
  inputs::store(got.data(), 1, kf::DType::f32, inputs::encode(1.5, kf::DType::f32));
  inputs::store(got.data(), 0, kf::DType::f32, inputs::encode(-0.0, kf::DType::f32));
  CHECK(compare_bits(got, want, kf::DType::f32, {2}).bad_count == 1);
}
