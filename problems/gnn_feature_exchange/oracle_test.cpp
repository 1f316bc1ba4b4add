#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

struct Fake : OracleFake {
  // features [world * rows, hidden] and ids [world * rows] on every rank.
  Fake(int world, int rank, int64_t rows, int64_t hidden) : OracleFake(world, rank) {
    shapes["features"].assign(static_cast<size_t>(world), {world * rows, hidden});
    shapes["ids"].assign(static_cast<size_t>(world), {world * rows});
    outs["out"] = std::vector<double>(static_cast<size_t>(world * rows * hidden), -1);
  }
  bool run(std::string* err) { return run_oracle("gnn_feature_exchange", err); }
};

}  // namespace

TEST_CASE("gnn_feature_exchange oracle gathers, then exchanges rotated chunks, world 2") {
  REQUIRE(problem_oracle("gnn_feature_exchange").loaded());
  // problem.json's worked example: rows = hidden = 1, features(0) = [a, b] = [1, 2],
  // ids(0) = [1, 0]; features(1) = [c, d] = [3, 4], ids(1) = [0, 0]. g(0) = [2, 1],
  // g(1) = [3, 3]; out(0) = [g(0)[0], g(1)[1]], out(1) = [g(1)[0], g(0)[1]].
  const std::vector<std::vector<double>> want = {{2, 3}, {3, 1}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 1, 1);
    f.in["features"] = {{1, 2}, {3, 4}};
    f.in["ids"] = {{1, 0}, {0, 0}};
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["out"] == want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("gnn_feature_exchange oracle at world 3 takes chunk (3 - k) mod 3 of rank + k") {
  // rows = 1, hidden = 2, ids the identity, so g(s) = features(s): rank s's row p is
  // [10 s + p, 10 s + p + 0.5]. out(r) chunk k = g(r + k)[(3 - k) mod 3].
  const std::vector<std::vector<double>> features = {
      {0, 0.5, 1, 1.5, 2, 2.5}, {10, 10.5, 11, 11.5, 12, 12.5}, {20, 20.5, 21, 21.5, 22, 22.5}};
  // Rank 0: chunks from (0, 0), (1, 2), (2, 1); rank 1: (1, 0), (2, 2), (0, 1);
  // rank 2: (2, 0), (0, 2), (1, 1).
  const std::vector<std::vector<double>> want = {
      {0, 0.5, 12, 12.5, 21, 21.5}, {10, 10.5, 22, 22.5, 1, 1.5}, {20, 20.5, 2, 2.5, 11, 11.5}};
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank, 1, 2);
    f.in["features"] = features;
    f.in["ids"] = {{0, 1, 2}, {0, 1, 2}, {0, 1, 2}};
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["out"] == want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("gnn_feature_exchange oracle at world 1 is features[ids]; refuses a bad id") {
  Fake f(1, 0, 3, 1);
  f.in["features"] = {{5, 6, 7}};
  f.in["ids"] = {{2, 2, 0}};
  std::string err;
  REQUIRE(f.run(&err));
  CHECK(f.outs["out"] == std::vector<double>{7, 7, 5});

  Fake g(1, 0, 3, 1);
  g.in["features"] = {{5, 6, 7}};
  g.in["ids"] = {{0, 3, 1}};
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("outside [0, 2]") != std::string::npos);
}
