#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's x and logits (row-major values and shapes) and this rank's outputs.
struct Fake : OracleFake {
  Fake(int world, int rank, int e, int topk) : OracleFake(world, rank) {
    io.params = {{"E", e}, {"topk", topk}};
  }
  // x(s) = xs[s] ([m, n]); every rank has the same logits ([m, e]). Outputs are poisoned:
  // the oracle must write them all.
  void inputs(std::vector<std::vector<double>> xs, int64_t m, int64_t n,
              const std::vector<double>& logits, int64_t e, size_t y_rows) {
    const size_t world = xs.size();
    shapes["x"].assign(world, {m, n});
    shapes["logits"].assign(world, {m, e});
    in["x"] = std::move(xs);
    in["logits"].assign(world, logits);
    outs["y"] = std::vector<double>(y_rows * static_cast<size_t>(n), -7);
    outs["perm"] = std::vector<double>(static_cast<size_t>(m * io.iparam("topk")), -7);
    outs["routing_map"] = std::vector<double>(static_cast<size_t>(e * m), -7);
  }
  bool run(std::string* err) { return run_oracle("moe_dispatch", err); }
};

// Row t of rank s's x is [10 s + t, -(10 s + t)].
std::vector<double> rows_of(int s, int m) {
  std::vector<double> x;
  for (int t = 0; t < m; ++t) x.insert(x.end(), {10.0 * s + t, -(10.0 * s + t)});
  return x;
}

}  // namespace

TEST_CASE("moe_dispatch oracle: the description's world-2 example, with a tie among logits") {
  REQUIRE(problem_oracle("moe_dispatch").loaded());
  // E = 4, topk = 2, M = 3. Token 0: logits [0, 3, 2, 1] -> experts {1, 2}. Token 1:
  // [2, 2, 2, 1], a three-way tie that goes to the lower indices -> {0, 1}. Token 2:
  // [-1, 4, 0, 0.5] -> {1, 3}. Sorted pairs: (t1,e0) (t0,e1) (t1,e1) (t2,e1) (t0,e2)
  // (t2,e3): perm = [1, 0, 1, 2, 0, 2]. R = 6, q = 3, S = 3, L = 2, C = 1, n = 1, 2.
  // Rank r's y: P(0)[3r], P(1)[3r], P(0)[3r+1], P(0)[3r+2], P(1)[3r+1], P(1)[3r+2], where
  // P(s) = x(s) rows [1, 0, 1, 2, 0, 2]: rank 0 gets tokens 1, 1, 0, 1, 0, 1 and rank 1
  // tokens 2, 2, 0, 2, 0, 2 (the first, third and fourth from rank 0, the rest rank 1).
  const std::vector<double> logits = {0, 3, 2, 1, 2, 2, 2, 1, -1, 4, 0, 0.5};
  const std::vector<std::vector<double>> tokens = {{1, 11, 0, 1, 10, 11}, {2, 12, 0, 2, 10, 12}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 4, 2);
    f.inputs({rows_of(0, 3), rows_of(1, 3)}, 3, 2, logits, 4, 6);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    std::vector<double> want;
    for (double v : tokens[static_cast<size_t>(rank)]) want.insert(want.end(), {v, -v});
    CHECK(f.outs["y"] == want);
    CHECK(f.outs["perm"] == std::vector<double>{1, 0, 1, 2, 0, 2});
    CHECK(f.outs["routing_map"] == std::vector<double>{0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1});
  }
}

TEST_CASE("moe_dispatch oracle: world 1 is the permuted rows, the last sub-chunk uneven") {
  // E = 2, topk = 1, M = 3: tokens go to experts 1, 0, 1, so perm = [1, 0, 2] and y = P:
  // x rows 1, 0, 2 (L = 2, C = 1: sub-chunks of 1 and 2 rows, still in order at world 1).
  Fake f(1, 0, 2, 1);
  f.inputs({rows_of(0, 3)}, 3, 2, {0, 1, 5, -5, 0.25, 0.5}, 2, 3);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["y"] == std::vector<double>{1, -1, 0, 0, 2, -2});
  CHECK(f.outs["perm"] == std::vector<double>{1, 0, 2});
  CHECK(f.outs["routing_map"] == std::vector<double>{0, 1, 0, 1, 0, 1});
}

TEST_CASE("moe_dispatch oracle: world 4, the last rank takes the remainder of the split") {
  // E = 4, topk = 1, M = 5: token t goes to expert t % 4, so perm = [0, 4, 1, 2, 3] on
  // every rank. R = 5, q = 1: ranks 0-2 get S = 1 row from each rank, rank 3 gets 2
  // (positions 3 and 4: tokens 2 and 3). L = 1, so y is by source rank.
  std::vector<double> logits;
  for (int t = 0; t < 5; ++t)
    for (int e = 0; e < 4; ++e) logits.push_back(e == t % 4 ? 1 : 0);
  std::vector<std::vector<double>> xs;
  for (int s = 0; s < 4; ++s) xs.push_back(rows_of(s, 5));
  const std::vector<std::vector<double>> tokens = {
      {0, 10, 20, 30}, {4, 14, 24, 34}, {1, 11, 21, 31}, {2, 3, 12, 13, 22, 23, 32, 33}};
  for (int rank = 0; rank < 4; ++rank) {
    Fake f(4, rank, 4, 1);
    f.inputs(xs, 5, 2, logits, 4, tokens[static_cast<size_t>(rank)].size());
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    std::vector<double> want;
    for (double v : tokens[static_cast<size_t>(rank)]) want.insert(want.end(), {v, -v});
    CHECK(f.outs["y"] == want);
    CHECK(f.outs["perm"] == std::vector<double>{0, 4, 1, 2, 3});
  }
}

TEST_CASE("moe_dispatch oracle refuses inconsistent shapes and parameters") {
  const std::vector<double> logits = {0, 3, 2, 1, 2, 2, 2, 1, -1, 4, 0, 0.5};
  std::string err;
  Fake f(2, 0, 4, 2);
  f.inputs({rows_of(0, 3), rows_of(1, 3)}, 3, 2, logits, 4, 6);
  f.shapes["x"][1] = {2, 3};  // rank 1 holds a different x
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake g(2, 1, 4, 2);
  g.inputs({rows_of(0, 3), rows_of(1, 3)}, 3, 2, logits, 4, 5);  // y one row short
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("y has") != std::string::npos);
  Fake h(3, 0, 4, 2);  // E = 4 is not a multiple of world 3
  h.inputs({rows_of(0, 3), rows_of(1, 3), rows_of(2, 3)}, 3, 2, logits, 4, 6);
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("multiple of world") != std::string::npos);
}
