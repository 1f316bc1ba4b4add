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
  bool run(std::string* err) { return run_oracle("gemm_all_reduce", err); }
};

}  // namespace

TEST_CASE("gemm_all_reduce oracle: world 1 is a plain GEMM") {
  REQUIRE(problem_oracle("gemm_all_reduce").loaded());
  // a = [[1,2,3],[4,5,6]], b = [[1,0],[0,1],[1,1]]: c = [[1+3, 2+3], [4+6, 5+6]].
  Fake f(1, 0);
  f.matrices({{1, 2, 3, 4, 5, 6}}, {2, 3}, {{1, 0, 0, 1, 1, 1}}, {3, 2}, 4);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["c"] == std::vector<double>{4, 5, 10, 11});
}

TEST_CASE("gemm_all_reduce oracle: world 2 and 3, every rank gets the whole sum") {
  // World 2, K = 2 on both ranks.
  // Rank 0: a = [[1,2],[3,4]], b = identity: P(0) = [[1,2],[3,4]].
  // Rank 1: a = [[1,1],[0,2]], b = [[2,0],[1,3]]: P(1) = [[3,3],[2,6]].
  // C = [[4,5],[5,10]] on both ranks.
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.matrices({{1, 2, 3, 4}, {1, 1, 0, 2}}, {2, 2}, {{1, 0, 0, 1}, {2, 0, 1, 3}}, {2, 2}, 4);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["c"] == std::vector<double>{4, 5, 5, 10});
  }
  // World 3, K = 1: P(s) is the outer product of a(s) (a column of 2) and b(s) (a row of 2).
  // a(0) = [1,2], b(0) = [1,1]; a(1) = [0,1], b(1) = [5,-1]; a(2) = [2,0], b(2) = [0.5,2].
  // Row 0: 1*[1,1] + 0*[5,-1] + 2*[0.5,2] = [2,5]; row 1: 2*[1,1] + 1*[5,-1] + 0 = [7,1].
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.matrices({{1, 2}, {0, 1}, {2, 0}}, {2, 1}, {{1, 1}, {5, -1}, {0.5, 2}}, {1, 2}, 4);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["c"] == std::vector<double>{2, 5, 7, 1});
  }
}

TEST_CASE("gemm_all_reduce oracle refuses mismatched matrices and a c of the wrong size") {
  std::string err;
  Fake f(2, 0);
  f.matrices({{1, 2, 3, 4}, {1, 2, 3, 4}}, {2, 2}, {{1, 0, 0, 1}, {1, 0, 0, 1}}, {2, 2}, 4);
  f.shapes["a"][1] = {4, 1};  // rank 1 holds a different shape
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake g(2, 1);
  g.matrices({{1, 2, 3, 4}, {1, 2, 3, 4}}, {2, 2}, {{1, 0, 0, 1}, {1, 0, 0, 1}}, {2, 2}, 2);
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("M * N") != std::string::npos);
  Fake h(1, 0);
  h.matrices({{1, 2, 3, 4}}, {2, 2}, {{1, 2, 3}}, {3, 1}, 2);  // a's K = 2, b's K = 3
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("[M, K] and [K, N]") != std::string::npos);
}
