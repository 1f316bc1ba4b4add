#include "inputs.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace sandbox::inputs;
using kf::DType;

TEST_CASE("inputs: the generator is a pure function of its arguments") {
  Init u;
  for (int64_t i = 0; i < 100; ++i)
    CHECK(double_bits(value(42, 1, 2, i, u)) == double_bits(value(42, 1, 2, i, u)));
  CHECK(call_seed(42, 0, 1, 2) == call_seed(42, 0, 1, 2));
}

TEST_CASE("inputs: seeds, ranks, tensors and indices give different values") {
  Init u;
  int same_rank = 0, same_tensor = 0, same_seed = 0, same_next = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    double v = value(7, 0, 0, i, u);
    same_rank += v == value(7, 1, 0, i, u);
    same_tensor += v == value(7, 0, 1, i, u);
    same_seed += v == value(8, 0, 0, i, u);
    same_next += v == value(7, 0, 0, i + 1, u);
  }
  CHECK(same_rank == 0);
  CHECK(same_tensor == 0);
  CHECK(same_seed == 0);
  CHECK(same_next == 0);
  CHECK(call_seed(42, 0, 0, 1) != call_seed(42, 0, 1, 0));
  CHECK(call_seed(42, 0, 0, 0) != call_seed(42, 1, 0, 0));
  CHECK(call_seed(42, 0, 0, 0) != call_seed(43, 0, 0, 0));
}

TEST_CASE("inputs: uniform and int stay in range and cover it") {
  Init u{Dist::uniform, -2.0, 3.0};
  double lo = 1e9, hi = -1e9;
  for (int64_t i = 0; i < 20000; ++i) {
    double v = value(1, 0, 0, i, u);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  CHECK(lo >= -2.0);
  CHECK(hi < 3.0);
  CHECK(lo < -1.99);
  CHECK(hi > 2.99);

  Init n{Dist::integer, -3, 4};
  std::vector<int> seen(8, 0);
  for (int64_t i = 0; i < 2000; ++i) {
    double v = value(1, 0, 0, i, n);
    REQUIRE(v == std::floor(v));
    REQUIRE(v >= -3);
    REQUIRE(v <= 4);
    seen[static_cast<int>(v) + 3]++;
  }
  for (int c : seen) CHECK(c > 150);  // 250 expected each
}

TEST_CASE("inputs: normal has roughly the asked mean and standard deviation") {
  Init g{Dist::normal, 5.0, 2.0};
  const int n = 100000;
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = value(3, 0, 0, i, g);
    s += v;
    s2 += v * v;
  }
  double mean = s / n, sd = std::sqrt(s2 / n - mean * mean);
  CHECK(mean == doctest::Approx(5.0).epsilon(0.01));
  CHECK(sd == doctest::Approx(2.0).epsilon(0.02));
}

TEST_CASE("inputs: known bit patterns of every dtype") {
  CHECK(encode(1.0, DType::bf16) == 0x3f80);
  CHECK(encode(-2.0, DType::bf16) == 0xc000);
  CHECK(encode(1.0 + std::ldexp(1.0, -8), DType::bf16) == 0x3f80);      // tie to even
  CHECK(encode(1.0 + 3 * std::ldexp(1.0, -8), DType::bf16) == 0x3f82);  // tie to even
  CHECK(encode(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20), DType::bf16) == 0x3f81);

  CHECK(encode(1.0, DType::f16) == 0x3c00);
  CHECK(encode(65504.0, DType::f16) == 0x7bff);
  CHECK(encode(65520.0, DType::f16) == 0x7c00);  // halfway to 2^16 rounds to inf
  CHECK(encode(1.0 + std::ldexp(1.0, -11), DType::f16) == 0x3c00);
  CHECK(encode(std::ldexp(1.0, -24), DType::f16) == 0x0001);
  CHECK(encode(std::ldexp(1.0, -25), DType::f16) == 0x0000);      // tie to even (0)
  CHECK(encode(3 * std::ldexp(1.0, -26), DType::f16) == 0x0001);  // above the tie
  CHECK(encode(-0.0, DType::f16) == 0x8000);

  CHECK(encode(1.0, DType::e4m3) == 0x38);
  CHECK(encode(448.0, DType::e4m3) == 0x7e);
  CHECK(encode(500.0, DType::e4m3) == 0x7e);
  CHECK(encode(-1e9, DType::e4m3) == 0xfe);
  CHECK(encode(std::numeric_limits<double>::infinity(), DType::e4m3) == 0x7e);
  CHECK(encode(std::nan(""), DType::e4m3) == 0x7f);
  CHECK(encode(std::ldexp(1.0, -9), DType::e4m3) == 0x01);
  CHECK(decode(0x7e, DType::e4m3) == 448.0);
  CHECK(std::isnan(decode(0x7f, DType::e4m3)));
  CHECK(std::isnan(decode(0xff, DType::e4m3)));

  CHECK(encode(1.0, DType::e5m2) == 0x3c);
  CHECK(encode(57344.0, DType::e5m2) == 0x7b);
  CHECK(encode(61440.0, DType::e5m2) == 0x7c);  // the tie rounds to even: inf
  CHECK(encode(1e6, DType::e5m2) == 0x7c);
  CHECK(decode(0x7c, DType::e5m2) == std::numeric_limits<double>::infinity());
  CHECK(decode(0xfc, DType::e5m2) == -std::numeric_limits<double>::infinity());

  CHECK(encode(1.0, DType::f32) == 0x3f800000);
  CHECK(encode(0.1, DType::f64) == double_bits(0.1));
  CHECK(decode(encode(2.5, DType::i32), DType::i32) == 2.0);
  CHECK(decode(encode(3.5, DType::i32), DType::i32) == 4.0);
  CHECK(decode(encode(-2.5, DType::i32), DType::i32) == -2.0);
  CHECK(decode(encode(-2.7, DType::i64), DType::i64) == -3.0);
  CHECK(encode(300.0, DType::u8) == 255);
  CHECK(encode(-5.0, DType::u8) == 0);
  CHECK(encode(-1.0, DType::i32) == 0xffffffffu);
}

TEST_CASE("inputs: every small-float encoding decodes and re-encodes to itself") {
  struct Case {
    DType t;
    uint32_t count;
  };
  for (Case c : {Case{DType::f16, 65536}, Case{DType::bf16, 65536}, Case{DType::e4m3, 256},
                 Case{DType::e5m2, 256}}) {
    int bad = 0;
    for (uint32_t b = 0; b < c.count; ++b) {
      double v = decode(b, c.t);
      if (std::isnan(v)) continue;
      bad += encode(v, c.t) != b;
    }
    CHECK_MESSAGE(bad == 0, sandbox::inputs::decode(1, c.t));
  }
}

TEST_CASE("inputs: stored values are the generated values rounded to the dtype") {
  Init u{Dist::uniform, -1, 1};
  std::vector<uint16_t> buf(64);
  generate_host(buf.data(), 64, DType::bf16, 9, 1, 0, u);
  for (int64_t i = 0; i < 64; ++i) {
    CHECK(load(buf.data(), i, DType::bf16) == buf[i]);
    double want = value(9, 1, 0, i, u);
    double got = decode(buf[i], DType::bf16);
    CHECK(std::fabs(got - want) <= std::fabs(want) * std::ldexp(1.0, -8) + 1e-30);
  }
}
