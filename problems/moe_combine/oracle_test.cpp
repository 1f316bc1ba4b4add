#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's x and logits (row-major values and shapes) and this rank's y.
struct Fake : OracleFake {
  Fake(int world, int rank, int e, int topk) : OracleFake(world, rank) {
    io.params = {{"E", e}, {"topk", topk}};
  }
  // N = 1: x(d) = xs[d] (a column); every rank has the same logits ([m, e]); y is
  // poisoned, so the oracle must write it all.
  void inputs(std::vector<std::vector<double>> xs, const std::vector<double>& logits, int64_t m,
              int64_t e) {
    shapes["x"].clear();
    for (const std::vector<double>& x : xs)
      shapes["x"].push_back({static_cast<int64_t>(x.size()), 1});
    shapes["logits"].assign(xs.size(), {m, e});
    in["x"] = std::move(xs);
    in["logits"].assign(shapes["x"].size(), logits);
    outs["y"] = std::vector<double>(static_cast<size_t>(m), -7);
  }
  bool run(std::string* err) { return run_oracle("moe_combine", err); }
};

// x(d)[row] = 100 d + row, for `rows` rows.
std::vector<double> column(int d, int rows) {
  std::vector<double> x;
  for (int i = 0; i < rows; ++i) x.push_back(100.0 * d + i);
  return x;
}

// The softmax weight of a over b: e^a / (e^a + e^b).
double over(double a, double b) {
  return 1 / (1 + std::exp(b - a));
}

}  // namespace

TEST_CASE("moe_combine oracle: the description's world-2 example, with a tie among logits") {
  REQUIRE(problem_oracle("moe_combine").loaded());
  // E = 4, topk = 2, M = 3. Token 0: logits [0, 3, 2, 1] -> experts 1, 2. Token 1:
  // [2, 2, 2, 1], a three-way tie that goes to the lower indices -> experts 0, 1, weights
  // 1/2 each. Token 2: [-1, 4, 0, 0.5] -> experts 1, 3. Positions: 0 (t1,e0), 1 (t0,e1),
  // 2 (t1,e1), 3 (t2,e1), 4 (t0,e2), 5 (t2,e3); q = 3, L = 2, C = 1, n = 1, 2, so x(d)
  // holds positions 3d of ranks 0, 1, then 3d+1, 3d+2 of rank 0, then of rank 1: rank s
  // finds offset i of block d at row s (i = 0) or 2 + 2s + (i - 1).
  const std::vector<double> logits = {0, 3, 2, 1, 2, 2, 2, 1, -1, 4, 0, 0.5};
  const double w01 = over(3, 2), w02 = over(2, 3), w21 = over(4, 0.5), w23 = over(0.5, 4);
  // Rank 0: t0 = p1 (x(0)[2]) + p4 (x(1)[2]); t1 = p0 (x(0)[0]) + p2 (x(0)[3]);
  //         t2 = p3 (x(1)[0]) + p5 (x(1)[3]).
  // Rank 1: t0 = x(0)[4] + x(1)[4]; t1 = x(0)[1] + x(0)[5]; t2 = x(1)[1] + x(1)[5].
  const std::vector<std::vector<double>> want = {
      {w01 * 2 + w02 * 102, 0.5 * 0 + 0.5 * 3, w21 * 100 + w23 * 103},
      {w01 * 4 + w02 * 104, 0.5 * 1 + 0.5 * 5, w21 * 101 + w23 * 105}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 4, 2);
    f.inputs({column(0, 6), column(1, 6)}, logits, 3, 4);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    for (size_t t = 0; t < 3; ++t)
      CHECK(f.outs["y"][t] == doctest::Approx(want[static_cast<size_t>(rank)][t]).epsilon(1e-12));
  }
}

TEST_CASE("moe_combine oracle: world 1 reads x in the permuted order itself") {
  // E = 2, topk = 2: both tokens go to both experts. Token 0: logits [0, 0], weights 1/2,
  // 1/2; token 1: [ln 3, 0], weights 3/4, 1/4. Positions: (t0,e0) (t1,e0) (t0,e1) (t1,e1).
  // x = [1, 2, 3, 4]: y[0] = (1 + 3) / 2 = 2, y[1] = 3/4 * 2 + 1/4 * 4 = 2.5.
  Fake f(1, 0, 2, 2);
  f.inputs({{1, 2, 3, 4}}, {0, 0, std::log(3.0), 0}, 2, 2);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["y"][0] == doctest::Approx(2).epsilon(1e-12));
  CHECK(f.outs["y"][1] == doctest::Approx(2.5).epsilon(1e-12));
}

TEST_CASE("moe_combine oracle: world 4, the last rank holds the remainder of the split") {
  // E = 4, topk = 1 (weights 1), M = 5: token t goes to expert t % 4, so tokens 0, 4, 1, 2,
  // 3 are at positions 0 to 4. q = 1: positions 0, 1, 2 are on ranks 0, 1, 2 (row s: one
  // row from each rank), positions 3 and 4 on rank 3, which holds 2 rows from each rank
  // (rows 2s and 2s + 1).
  std::vector<double> logits;
  for (int t = 0; t < 5; ++t)
    for (int e = 0; e < 4; ++e) logits.push_back(e == t % 4 ? 1 : 0);
  for (int rank = 0; rank < 4; ++rank) {
    Fake f(4, rank, 4, 1);
    f.inputs({column(0, 4), column(1, 4), column(2, 4), column(3, 8)}, logits, 5, 4);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    const double s = rank;
    CHECK(f.outs["y"] == std::vector<double>{s, 200 + s, 300 + 2 * s, 301 + 2 * s, 100 + s});
  }
}

TEST_CASE("moe_combine oracle refuses inconsistent shapes and parameters") {
  const std::vector<double> logits = {0, 3, 2, 1, 2, 2, 2, 1, -1, 4, 0, 0.5};
  std::string err;
  Fake f(2, 0, 4, 2);
  f.inputs({column(0, 6), column(1, 5)}, logits, 3, 4);  // rank 1's x a row short
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake g(2, 1, 4, 2);
  g.inputs({column(0, 6), column(1, 6)}, logits, 3, 4);
  g.outs["y"].resize(2);
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("y has 2") != std::string::npos);
  Fake h(3, 0, 4, 2);  // E = 4 is not a multiple of world 3
  h.inputs({column(0, 6), column(1, 6), column(2, 6)}, logits, 3, 4);
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("multiple of world") != std::string::npos);
}
