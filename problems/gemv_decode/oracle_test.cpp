#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's x [T, H], w [V, H] and bias [V] (row-major values) and this rank's logits.
struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  void inputs(std::vector<std::vector<double>> x, std::vector<std::vector<double>> w,
              std::vector<std::vector<double>> bias, int64_t t, int64_t h, int64_t v) {
    shapes["x"].assign(x.size(), {t, h});
    shapes["w"].assign(w.size(), {v, h});
    shapes["bias"].assign(bias.size(), {v});
    in["x"] = std::move(x);
    in["w"] = std::move(w);
    in["bias"] = std::move(bias);
    // Poison: the oracle must write it all.
    outs["logits"] = std::vector<double>(static_cast<size_t>(t * io.world * v), -7);
  }
  bool run(std::string* err) { return run_oracle("gemv_decode", err); }
};

}  // namespace

TEST_CASE("gemv_decode oracle: world 1 is x @ w^T + bias") {
  REQUIRE(problem_oracle("gemv_decode").loaded());
  // x = [[1,2],[3,4]], w = [[1,0],[0,1],[1,1]] (V = 3 rows of H = 2), bias = [0.5,-1,2]:
  // token 0: [1+0.5, 2-1, 3+2]; token 1: [3+0.5, 4-1, 7+2].
  Fake f(1, 0);
  f.inputs({{1, 2, 3, 4}}, {{1, 0, 0, 1, 1, 1}}, {{0.5, -1, 2}}, 2, 2, 3);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["logits"] == std::vector<double>{1.5, 1, 5, 3.5, 3, 9});
}

TEST_CASE("gemv_decode oracle: the pieces go side by side, from each rank's own x") {
  // World 2, T = 2, H = 1, V = 1.
  // Rank 0: x = [[2],[3]], w = [[1]], bias = [10]: L(0) = [[12],[13]].
  // Rank 1: x = [[1],[-1]], w = [[4]], bias = [0.5]: L(1) = [[4.5],[-3.5]].
  // logits [2, 2] = [[12, 4.5], [13, -3.5]] on both ranks (the all-gather's stack would
  // read 12, 13, 4.5, -3.5).
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.inputs({{2, 3}, {1, -1}}, {{1}, {4}}, {{10}, {0.5}}, 2, 1, 1);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["logits"] == std::vector<double>{12, 4.5, 13, -3.5});
  }
  // World 3, T = 1, H = 2, V = 2.
  // Rank 0: x = [1,1], w = [[1,2],[3,4]], bias = [0,0]: L(0) = [3, 7].
  // Rank 1: x = [2,0], w = [[1,2],[3,4]], bias = [1,-1]: L(1) = [3, 5].
  // Rank 2: x = [0,-1], w = [[5,6],[0,0.5]], bias = [0,2]: L(2) = [-6, 1.5].
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.inputs({{1, 1}, {2, 0}, {0, -1}}, {{1, 2, 3, 4}, {1, 2, 3, 4}, {5, 6, 0, 0.5}},
             {{0, 0}, {1, -1}, {0, 2}}, 1, 2, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["logits"] == std::vector<double>{3, 7, 3, 5, -6, 1.5});
  }
}

TEST_CASE("gemv_decode oracle refuses mismatched shapes and logits of the wrong size") {
  std::string err;
  Fake f(2, 0);
  f.inputs({{1, 2}, {1, 2}}, {{1, 0}, {1, 0}}, {{0}, {0}}, 1, 2, 1);
  f.shapes["w"][1] = {2, 1};  // rank 1 holds a different shape
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake g(2, 1);
  g.inputs({{1, 2}, {1, 2}}, {{1, 0}, {1, 0}}, {{0}, {0}}, 1, 2, 1);
  g.outs["logits"].resize(1);  // T * V, not T * world * V
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("T * world * V") != std::string::npos);
  Fake h(1, 0);
  h.inputs({{1, 2}}, {{1, 0}}, {{0}}, 1, 2, 1);
  h.shapes["bias"][0] = {2};  // bias has 2 entries, w 1 row
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("[T, H], [V, H] and [V]") != std::string::npos);
}
