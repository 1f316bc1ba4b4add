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
  bool run(std::string* err) { return run_oracle("all_gather_gemm", err); }
};

}  // namespace

TEST_CASE("all_gather_gemm oracle: world 2, shards side by side along k, each rank its own b") {
  REQUIRE(problem_oracle("all_gather_gemm").loaded());
  // a(0) = [[1],[2]], a(1) = [[3],[4]] (K/world = 1), so A = [[1,3],[2,4]].
  // Rank 0: b = identity, c = A = [[1,3],[2,4]].
  // Rank 1: b = [[1,1],[2,-1]], c = [[1*1+3*2, 1*1+3*(-1)], [2*1+4*2, 2*1+4*(-1)]]
  //         = [[7,-2],[10,-2]].
  const std::vector<std::vector<double>> want = {{1, 3, 2, 4}, {7, -2, 10, -2}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.matrices({{1, 2}, {3, 4}}, {2, 1}, {{1, 0, 0, 1}, {1, 1, 2, -1}}, {2, 2}, 4);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["c"] == want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("all_gather_gemm oracle: world 3 dot products, and world 1 is a plain GEMM") {
  // M = N = 1, K/world = 1: a(s) = [s + 1], so A = [1, 2, 3]; rank 2's b = [1, 10, 100]
  // (a column): c = 1*1 + 2*10 + 3*100 = 321. Rank 0's b = [0, 0, 1]: c = 3.
  Fake f(3, 2);
  f.matrices({{1}, {2}, {3}}, {1, 1}, {{0, 0, 1}, {5, 5, 5}, {1, 10, 100}}, {3, 1}, 1);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["c"] == std::vector<double>{321});
  Fake f0(3, 0);
  f0.matrices({{1}, {2}, {3}}, {1, 1}, {{0, 0, 1}, {5, 5, 5}, {1, 10, 100}}, {3, 1}, 1);
  REQUIRE_MESSAGE(f0.run(&err), err);
  CHECK(f0.outs["c"] == std::vector<double>{3});
  // World 1: a = [[1,2]], b = [[3],[4]]: c = [1*3 + 2*4] = [11].
  Fake g(1, 0);
  g.matrices({{1, 2}}, {1, 2}, {{3, 4}}, {2, 1}, 1);
  REQUIRE_MESSAGE(g.run(&err), err);
  CHECK(g.outs["c"] == std::vector<double>{11});
}

TEST_CASE("all_gather_gemm oracle refuses mismatched shards and a b of the wrong height") {
  std::string err;
  Fake f(2, 0);
  f.matrices({{1, 2}, {3, 4}}, {2, 1}, {{1, 0, 0, 1}, {1, 0, 0, 1}}, {2, 2}, 4);
  f.shapes["a"][1] = {1, 2};  // rank 1 holds a different shard shape
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake g(2, 1);
  g.matrices({{1, 2}, {3, 4}}, {2, 1}, {{1, 0, 0}, {1, 0, 0}}, {3, 1}, 2);  // K = 3 != 2 * 1
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("world * Kl") != std::string::npos);
}
