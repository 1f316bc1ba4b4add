#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's g0, g1, g2 (each [m, n]; grads[r][k] is rank r's gk), this rank's outputs.
struct Fake : OracleFake {
  Fake(int world, int rank, double max_norm) : OracleFake(world, rank) {
    io.params["max_norm"] = max_norm;
  }
  void tensors(const std::vector<std::vector<std::vector<double>>>& grads, int64_t m, int64_t n) {
    const char* names[3] = {"g0", "g1", "g2"};
    const char* ys[3] = {"y0", "y1", "y2"};
    for (int k = 0; k < 3; ++k) {
      in[names[k]].clear();
      shapes[names[k]].clear();
      for (const auto& rank_grads : grads) {
        in[names[k]].push_back(rank_grads[static_cast<size_t>(k)]);
        shapes[names[k]].push_back(
            {static_cast<int64_t>(rank_grads[static_cast<size_t>(k)].size())});
      }
      shapes[ys[k]].assign(grads.size(), {m, n});
      outs[ys[k]] = std::vector<double>(static_cast<size_t>(m * n), -7);  // poison
    }
    shapes["norm"].assign(grads.size(), {1});
    outs["norm"] = {-7};
  }
  bool run(std::string* err) { return run_oracle("clip_grad_norm", err); }
};

void check_near(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-12));
}

}  // namespace

TEST_CASE("clip_grad_norm oracle: world 1 clips by the norm of all three tensors") {
  REQUIRE(problem_oracle("clip_grad_norm").loaded());
  // m 1, n 2. Squares: g0 = [3, 4] gives 25, g1 = [0, 12] 144, g2 = [0, 0] 0: norm 13.
  // max_norm 1: coef 1/13, so y0 = [3, 4] / 13, y1 = [0, 12] / 13, y2 = 0.
  Fake f(1, 0, 1.0);
  f.tensors({{{3, 4}, {0, 12}, {0, 0}}}, 1, 2);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  check_near(f.outs["norm"], {13});
  check_near(f.outs["y0"], {3.0 / 13, 4.0 / 13});
  check_near(f.outs["y1"], {0, 12.0 / 13});
  check_near(f.outs["y2"], {0, 0});
}

TEST_CASE("clip_grad_norm oracle: a norm at or below max_norm leaves the gradients as they are") {
  // The same norm 13 with max_norm 13 (not strictly above) and 20: y = g.
  for (double max_norm : {13.0, 20.0}) {
    Fake f(1, 0, max_norm);
    f.tensors({{{3, 4}, {0, 12}, {0, 0}}}, 1, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    check_near(f.outs["norm"], {13});
    check_near(f.outs["y0"], {3, 4});
    check_near(f.outs["y1"], {0, 12});
    check_near(f.outs["y2"], {0, 0});
  }
}

TEST_CASE("clip_grad_norm oracle: world 2 sums every rank's squares, each rank scales its own") {
  // m 2, n 1. Rank 0: g0 = [1, 1], g1 = [1, 1], g2 = [2, 0]: squares 2 + 2 + 4 = 8.
  // Rank 1: g0 = [0, 2], g1 = [4, 0], g2 = [0, 2]: squares 4 + 16 + 4 = 24.
  // P = 32, norm = sqrt(32) = 4 sqrt2; max_norm 2: coef = 2 / (4 sqrt2) = 1 / (2 sqrt2).
  // (Rank 0 alone would have norm sqrt(8) and coef 1/sqrt2, twice as large.)
  const double c = 1 / (2 * std::sqrt(2.0));
  const std::vector<std::vector<std::vector<double>>> grads = {{{1, 1}, {1, 1}, {2, 0}},
                                                               {{0, 2}, {4, 0}, {0, 2}}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 2.0);
    f.tensors(grads, 2, 1);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    check_near(f.outs["norm"], {4 * std::sqrt(2.0)});
    const auto& mine = grads[static_cast<size_t>(rank)];
    check_near(f.outs["y0"], {mine[0][0] * c, mine[0][1] * c});
    check_near(f.outs["y1"], {mine[1][0] * c, mine[1][1] * c});
    check_near(f.outs["y2"], {mine[2][0] * c, mine[2][1] * c});
  }
}

TEST_CASE("clip_grad_norm oracle refuses a gradient or output of the wrong shape") {
  std::string err;
  Fake f(2, 0, 1.0);
  f.tensors({{{1, 2}, {3, 4}, {5, 6}}, {{1, 2}, {3, 4}, {5}}}, 1, 2);  // rank 1's g2 is short
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1's g2") != std::string::npos);
  Fake g(1, 0, 1.0);
  g.tensors({{{1, 2}, {3, 4}, {5, 6}}}, 1, 2);
  g.shapes["y0"][0] = {2};  // a flat y0
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("[M, N]") != std::string::npos);
}
