#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's x, rank 0's gamma (the others' is empty, as in problem.json), this rank's y.
struct Fake : OracleFake {
  Fake(int world, int rank, double eps) : OracleFake(world, rank) { io.params["eps"] = eps; }
  void tensors(std::vector<std::vector<double>> x, std::vector<double> gamma, int64_t rows,
               int64_t hidden) {
    const size_t world = x.size();
    shapes["x"].clear();
    for (const auto& v : x) shapes["x"].push_back({static_cast<int64_t>(v.size())});
    shapes["gamma"].assign(world, {0});
    shapes["gamma"][0] = {static_cast<int64_t>(gamma.size())};
    shapes["y"].assign(world, {rows, hidden});
    in["x"] = std::move(x);
    in["gamma"].assign(world, {});
    in["gamma"][0] = std::move(gamma);
    outs["y"] = std::vector<double>(static_cast<size_t>(rows * hidden), -7);  // poison
  }
  bool run(std::string* err) { return run_oracle("reduce_scatter_rmsnorm", err); }
};

void check_near(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
}

}  // namespace

TEST_CASE("reduce_scatter_rmsnorm oracle: world 1 normalizes each row and adds eps") {
  REQUIRE(problem_oracle("reduce_scatter_rmsnorm").loaded());
  // rows 2, hidden 2, eps 0. Row 0 = [3, 4]: mean square (9 + 16) / 2 = 12.5. Row 1 =
  // [1, -1]: mean square 1. gamma = [2, 0.5]: y = [6, 2] / sqrt(12.5), then [2, -0.5].
  Fake f(1, 0, 0.0);
  f.tensors({{3, 4, 1, -1}}, {2, 0.5}, 2, 2);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  check_near(f.outs["y"], {6 / std::sqrt(12.5), 2 / std::sqrt(12.5), 2, -0.5});
  // eps 3 on the row [1, 1] (mean square 1): rsqrt(1 + 3) = 0.5, so y = gamma / 2.
  Fake g(1, 0, 3.0);
  g.tensors({{1, 1}}, {2, 0.5}, 1, 2);
  REQUIRE_MESSAGE(g.run(&err), err);
  check_near(g.outs["y"], {1, 0.25});
}

TEST_CASE("reduce_scatter_rmsnorm oracle: world 2, rank r normalizes the mean of chunk r") {
  // rows 2, hidden 2, eps 0; each x is 2 chunks of 4. gamma = [0.5, 3] on rank 0.
  // Rank 0's share, (chunk 0 of x(0) + chunk 0 of x(1)) / 2:
  //   row 0: ([2,0] + [0,2]) / 2 = [1,1], mean square 1       -> y = [0.5, 3]
  //   row 1: ([1,1] + [1,-1]) / 2 = [1,0], mean square 0.5    -> y = [sqrt2 * 0.5, 0]
  // Rank 1's share, chunk 1:
  //   row 0: ([1,1] + [3,-1]) / 2 = [2,0], mean square 2      -> y = [sqrt2 * 0.5, 0]
  //   row 1: ([0,3] + [0,1]) / 2 = [0,2], mean square 2       -> y = [0, sqrt2 * 3]
  const double r2 = std::sqrt(2.0);
  const std::vector<std::vector<double>> want = {{0.5, 3, r2 * 0.5, 0}, {r2 * 0.5, 0, 0, r2 * 3}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 0.0);
    f.tensors({{2, 0, 1, 1, 1, 1, 0, 3}, {0, 2, 1, -1, 3, -1, 0, 1}}, {0.5, 3}, 2, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    check_near(f.outs["y"], want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("reduce_scatter_rmsnorm oracle: world 2 with eps, where dividing by world shows") {
  // rows 1, hidden 2, eps 5. Both ranks' x = [2, 2, 6, -2]: rank 0's share is
  // ([2,2] + [2,2]) / 2 = [2,2], mean square 4, rsqrt(4 + 5) = 1/3, so y = 2/3 * gamma;
  // rank 1's is [6,-2], mean square 20, rsqrt(25) = 1/5, so y = [6/5, -2/5] * gamma.
  // (Without the division the sums [4,4] would give 4/sqrt(21) * gamma instead.)
  const std::vector<std::vector<double>> want = {{2.0 / 3 * 0.5, 2.0 / 3 * 3},
                                                 {1.2 * 0.5, -0.4 * 3}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 5.0);
    f.tensors({{2, 2, 6, -2}, {2, 2, 6, -2}}, {0.5, 3}, 1, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    check_near(f.outs["y"], want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("reduce_scatter_rmsnorm oracle refuses an x, gamma or y of the wrong shape") {
  std::string err;
  Fake f(2, 1, 0.0);
  f.tensors({{1, 2, 3, 4}, {1, 2, 3}}, {1, 1}, 1, 2);  // rank 1's x is one short
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1's x") != std::string::npos);
  Fake g(2, 0, 0.0);
  g.tensors({{1, 2, 3, 4}, {1, 2, 3, 4}}, {1, 1, 1}, 1, 2);  // gamma of 3, hidden 2
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("gamma") != std::string::npos);
  Fake h(1, 0, 0.0);
  h.tensors({{1, 2}}, {1, 1}, 1, 2);
  h.shapes["y"][0] = {2};  // a flat y
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("[rows, hidden]") != std::string::npos);
}
