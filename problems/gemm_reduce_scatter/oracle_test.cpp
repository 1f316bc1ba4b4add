#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's a and b (row-major values and shapes) and this rank's c.
struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  void matrices(std::vector<std::vector<double>> a, std::vector<int64_t> sa,
                std::vector<std::vector<double>> b, std::vector<int64_t> sb, size_t c_size) {
    shapes["a"].assign(a.size(), sa);
    shapes["b"].assign(b.size(), sb);
    in["a"] = std::move(a);
    in["b"] = std::move(b);
    outs["c"] = std::vector<double>(c_size, -7);  // poison: the oracle must write it all
  }
  bool run(std::string* err) { return run_oracle("gemm_reduce_scatter", err); }
};

}  // namespace

TEST_CASE("gemm_reduce_scatter oracle: world 2, 2x2 shards, rank r gets row r of the sum") {
  REQUIRE(problem_oracle("gemm_reduce_scatter").loaded());
  // Rank 0: a = [[1,2],[3,4]], b = identity, so P(0) = [[1,2],[3,4]].
  // Rank 1: a = [[1,1],[0,2]], b = [[2,0],[1,3]], so P(1) = [[1*2+1*1, 1*0+1*3],
  //         [0*2+2*1, 0*0+2*3]] = [[3,3],[2,6]].
  // C = P(0) + P(1) = [[4,5],[5,10]]: rank 0 gets [4,5], rank 1 gets [5,10].
  const std::vector<std::vector<double>> want = {{4, 5}, {5, 10}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.matrices({{1, 2, 3, 4}, {1, 1, 0, 2}}, {2, 2}, {{1, 0, 0, 1}, {2, 0, 1, 3}}, {2, 2}, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["c"] == want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("gemm_reduce_scatter oracle: world 3 outer products, and world 1 is a plain GEMM") {
  // K/world = 1: P(s) is the outer product of a(s) (a column of 3) and b(s) (a row of 2).
  // a(0) = [1,2,3], b(0) = [1,1]; a(1) = [0,1,0], b(1) = [5,-1]; a(2) = [2,0,-1], b(2) = [0.5,2].
  // Row 0: 1*[1,1] + 0*[5,-1] + 2*[0.5,2] = [2,5]
  // Row 1: 2*[1,1] + 1*[5,-1] + 0*[0.5,2] = [7,1]
  // Row 2: 3*[1,1] + 0*[5,-1] - 1*[0.5,2] = [2.5,1]
  const std::vector<std::vector<double>> want = {{2, 5}, {7, 1}, {2.5, 1}};
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.matrices({{1, 2, 3}, {0, 1, 0}, {2, 0, -1}}, {3, 1}, {{1, 1}, {5, -1}, {0.5, 2}}, {1, 2}, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["c"] == want[static_cast<size_t>(rank)]);
  }
  // World 1: a = [[1,2]], b = [[3],[4]]: c = [1*3 + 2*4] = [11].
  Fake f(1, 0);
  f.matrices({{1, 2}}, {1, 2}, {{3, 4}}, {2, 1}, 1);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["c"] == std::vector<double>{11});
}

TEST_CASE("gemm_reduce_scatter oracle refuses mismatched shards and a c of the wrong size") {
  std::string err;
  Fake f(2, 0);
  f.matrices({{1, 2, 3, 4}, {1, 2, 3, 4}}, {2, 2}, {{1, 0, 0, 1}, {1, 0, 0, 1}}, {2, 2}, 2);
  f.shapes["a"][1] = {4, 1};  // rank 1 holds a different shard shape
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake g(2, 1);
  g.matrices({{1, 2, 3, 4}, {1, 2, 3, 4}}, {2, 2}, {{1, 0, 0, 1}, {1, 0, 0, 1}}, {2, 2}, 4);
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("M / world * N") != std::string::npos);
}
