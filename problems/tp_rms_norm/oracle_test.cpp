// The tp_rms_norm oracle (problems/tp_rms_norm/oracle.cpp) on tiny cases worked by hand:
// the mean square of a row spans every rank's columns, and each rank scales its own
// columns by its own weight.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's x [m, n] and weight [n]; this rank's y [m, n], poisoned.
struct Fake : OracleFake {
  Fake(int world, int rank, double eps) : OracleFake(world, rank) { io.params["eps"] = eps; }
  void tensors(std::vector<std::vector<double>> x, std::vector<std::vector<double>> weight,
               int64_t m, int64_t n) {
    const size_t world = x.size();
    shapes["x"].assign(world, {m, n});
    shapes["weight"].clear();
    for (const auto& w : weight) shapes["weight"].push_back({static_cast<int64_t>(w.size())});
    shapes["y"].assign(world, {m, n});
    in["x"] = std::move(x);
    in["weight"] = std::move(weight);
    outs["y"] = std::vector<double>(static_cast<size_t>(m * n), -7);  // poison
  }
  bool run(std::string* err) { return run_oracle("tp_rms_norm", err); }
};

void check_near(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
}

}  // namespace

TEST_CASE("tp_rms_norm oracle: world 1 is a plain RMSNorm with eps and weight") {
  REQUIRE(problem_oracle("tp_rms_norm").loaded());
  // M 2, N 2, eps 0, weight [2, 0.5]. Row 0 = [3, 4]: mean square (9 + 16) / 2 = 12.5, so
  // y = [3 * 2, 4 * 0.5] / sqrt(12.5). Row 1 = [1, -1]: mean square 1, y = [2, -0.5].
  Fake f(1, 0, 0.0);
  f.tensors({{3, 4, 1, -1}}, {{2, 0.5}}, 2, 2);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  check_near(f.outs["y"], {6 / std::sqrt(12.5), 2 / std::sqrt(12.5), 2, -0.5});
  // eps 3 on the row [1, 1] (mean square 1): rsqrt(1 + 3) = 0.5, so y = weight / 2.
  Fake g(1, 0, 3.0);
  g.tensors({{1, 1}}, {{2, 0.5}}, 1, 2);
  REQUIRE_MESSAGE(g.run(&err), err);
  check_near(g.outs["y"], {1, 0.25});
}

TEST_CASE("tp_rms_norm oracle: world 2, the mean square spans both ranks' columns") {
  // M 2, N 2 per rank (4 columns in all), eps 0. weight(0) = [0.5, 3], weight(1) = [-1, 2].
  //   row 0: x(0) = [3, 1], x(1) = [1, -1]: S = 9 + 1 + 1 + 1 = 12, mean square 3
  //          (rank 0's own columns alone would give 5, rank 1's 1)
  //   row 1: x(0) = [0, 2], x(1) = [2, 0]: S = 8, mean square 2
  // y(0) = [3 * 0.5, 1 * 3] / sqrt3, [0, 2 * 3] / sqrt2
  // y(1) = [1 * -1, -1 * 2] / sqrt3, [2 * -1, 0] / sqrt2
  const double r3 = std::sqrt(3.0), r2 = std::sqrt(2.0);
  const std::vector<std::vector<double>> want = {{1.5 / r3, 3 / r3, 0, 6 / r2},
                                                 {-1 / r3, -2 / r3, -2 / r2, 0}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 0.0);
    f.tensors({{3, 1, 0, 2}, {1, -1, 2, 0}}, {{0.5, 3}, {-1, 2}}, 2, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    check_near(f.outs["y"], want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("tp_rms_norm oracle: world 4, eps and the division by world * N") {
  // M 1, N 1: the row is [1 | 1 | 1 | 5] over the ranks, S = 28, mean square 28 / 4 = 7;
  // eps 2 makes it 9, so every rank's y = weight * x / 3. weights 3, 6, -3, 0.6 give
  // y = 1, 2, -1, 1. (Dividing by N alone would give 28 + 2 = 30 instead of 9.)
  const std::vector<double> want = {1, 2, -1, 1};
  for (int rank = 0; rank < 4; ++rank) {
    Fake f(4, rank, 2.0);
    f.tensors({{1}, {1}, {1}, {5}}, {{3}, {6}, {-3}, {0.6}}, 1, 1);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    check_near(f.outs["y"], {want[static_cast<size_t>(rank)]});
  }
}

TEST_CASE("tp_rms_norm oracle refuses an x, weight or y of the wrong shape") {
  std::string err;
  Fake f(2, 0, 0.0);
  f.tensors({{1, 2, 3, 4}, {1, 2, 3}}, {{1, 1}, {1, 1}}, 2, 2);  // rank 1's x is one short
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1's x") != std::string::npos);
  Fake g(2, 1, 0.0);
  g.tensors({{1, 2}, {3, 4}}, {{1, 1}, {1, 1, 1}}, 1, 2);  // rank 1's weight of 3, N 2
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("weight") != std::string::npos);
  Fake h(1, 0, 0.0);
  h.tensors({{1, 2}}, {{1, 1}}, 1, 2);
  h.shapes["y"][0] = {2};  // a flat y
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("[M, N]") != std::string::npos);
}
