#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// An OracleIO over literal per-rank inputs: what the sandbox builds from the generator.
struct Fake : OracleFake {
  Fake(int world, int rank, int64_t block) : OracleFake(world, rank) {
    io.params["block"] = static_cast<double>(block);
  }
  bool run(std::string* err) { return run_oracle("quantized_grad_all_reduce", err); }
};

}  // namespace

TEST_CASE("quantized_grad_all_reduce oracle rounds codes to even and keeps short blocks apart") {
  REQUIRE(problem_oracle("quantized_grad_all_reduce").loaded());
  // Block 0 has amax 127, so its scale is exactly 1 and its codes are the rounded inputs:
  // 2.5 and -3.5 are ties and go to the even integers 2 and -4. Block 1 is the lone 0.3,
  // whose own scale makes its code 127 and gives 0.3 back to within fp32 rounding.
  Fake f(1, 0, 4);
  f.in["x"] = {{2.5, -127, 0.4, -3.5, 0.3}};
  f.outs["y"] = std::vector<double>(5, -1);
  std::string err;
  REQUIRE(f.run(&err));
  const std::vector<double>& y = f.outs["y"];
  CHECK(y[0] == 2);
  CHECK(y[1] == -127);
  CHECK(y[2] == 0);
  CHECK(y[3] == -4);
  CHECK(y[4] == doctest::Approx(0.3).epsilon(1e-6));
}

TEST_CASE("quantized_grad_all_reduce oracle averages each rank's own dequantized x") {
  // Rank 0: amax 127, scale 1, codes [127, 0, 2] (0.5 and 1.5 round to even).
  // Rank 1: amax 254, scale 2, x / scale = [-31.75, 127, 1.5], codes [-32, 127, 2], so its
  // values are [-64, 254, 4]. The mean: [(127 - 64) / 2, (0 + 254) / 2, (2 + 4) / 2].
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 3);
    f.in["x"] = {{127, 0.5, 1.5}, {-63.5, 254, 3}};
    f.outs["y"] = std::vector<double>(3, 99);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{31.5, 127, 3});
  }
}

TEST_CASE("quantized_grad_all_reduce oracle maps an all-zero block to zero") {
  // Block 0 is all zeros: its scale is 1e-8 / 127 (the floor) and its codes 0. Block 1,
  // [8, 1]: scale 8/127, codes [127, 16] (1 / (8/127) = 15.875). Block 2 is the short 5.
  Fake f(1, 0, 2);
  f.in["x"] = {{0, 0, 8, 1, 5}};
  f.outs["y"] = std::vector<double>(5, 99);
  std::string err;
  REQUIRE(f.run(&err));
  const std::vector<double>& y = f.outs["y"];
  CHECK(y[0] == 0);
  CHECK(y[1] == 0);
  CHECK(y[2] == doctest::Approx(8).epsilon(1e-6));
  CHECK(y[3] == doctest::Approx(16 * 8 / 127.0).epsilon(1e-6));
  CHECK(y[4] == doctest::Approx(5).epsilon(1e-6));
}

TEST_CASE("quantized_grad_all_reduce oracle refuses a rank whose x is not as long as y") {
  Fake f(2, 0, 4);
  f.in["x"] = {{1, 2, 3}, {1, 2}};
  f.outs["y"] = std::vector<double>(3, 0);
  std::string err;
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
}
