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
  bool run(std::string* err) { return run_oracle("gemm_all_gather", err); }
};

}  // namespace

TEST_CASE("gemm_all_gather oracle: world 2, each rank's product in its column block") {
  REQUIRE(problem_oracle("gemm_all_gather").loaded());
  // M = K = 2, N/world = 1. a(0) = [[1,2],[3,4]], b(0) = [[1],[1]]: P(0) = [[3],[7]].
  // a(1) = [[1,0],[0,-1]], b(1) = [[5],[6]]: P(1) = [[5],[-6]].
  // Both ranks: c = [P(0) | P(1)] = [[3,5],[7,-6]].
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.matrices({{1, 2, 3, 4}, {1, 0, 0, -1}}, {2, 2}, {{1, 1}, {5, 6}}, {2, 1}, 4);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["c"] == std::vector<double>{3, 5, 7, -6});
  }
}

TEST_CASE("gemm_all_gather oracle: world 3 blocks two columns wide, and world 1 is a GEMM") {
  // M = K = 1, N/world = 2: a(s) = [[s + 1]], b(0) = [[1,2]], b(1) = [[3,4]], b(2) = [[5,6]]:
  // c = [1*1, 1*2 | 2*3, 2*4 | 3*5, 3*6] = [1, 2, 6, 8, 15, 18], on rank 1 as on any.
  Fake f(3, 1);
  f.matrices({{1}, {2}, {3}}, {1, 1}, {{1, 2}, {3, 4}, {5, 6}}, {1, 2}, 6);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["c"] == std::vector<double>{1, 2, 6, 8, 15, 18});
  // World 1: a = [[1,2,3]], b = [[1,0],[0,1],[2,-1]]: c = [1 + 6, 2 - 3] = [7, -1].
  Fake g(1, 0);
  g.matrices({{1, 2, 3}}, {1, 3}, {{1, 0, 0, 1, 2, -1}}, {3, 2}, 2);
  REQUIRE_MESSAGE(g.run(&err), err);
  CHECK(g.outs["c"] == std::vector<double>{7, -1});
}

TEST_CASE("gemm_all_gather oracle refuses mismatched shapes and a c of the wrong size") {
  std::string err;
  Fake f(2, 0);
  f.matrices({{1, 2}, {3, 4}}, {1, 2}, {{1, 0}, {0, 1}}, {2, 1}, 2);
  f.shapes["b"][1] = {1, 2};  // rank 1 holds a different shard shape
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake g(2, 1);
  g.matrices({{1, 2}, {3, 4}}, {1, 2}, {{1, 0}, {0, 1}}, {2, 1}, 3);  // c: 3 != 1 * 2
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("M * N") != std::string::npos);
}
