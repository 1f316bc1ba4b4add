#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's x (row-major values and shape) and this rank's y.
struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  void inputs(std::vector<std::vector<double>> x, std::vector<int64_t> shape, size_t y_size) {
    shapes["x"].assign(x.size(), shape);
    in["x"] = std::move(x);
    outs["y"] = std::vector<double>(y_size, -7);  // poison: the oracle must write it all
  }
  bool run(std::string* err) { return run_oracle("ulysses_all_to_all", err); }
};

}  // namespace

TEST_CASE("ulysses_all_to_all oracle: world 1 copies x") {
  REQUIRE(problem_oracle("ulysses_all_to_all").loaded());
  Fake f(1, 0);
  f.inputs({{1, 2, 3, 4, 5, 6}}, {2, 3}, 6);
  std::string err;
  REQUIRE(f.run(&err));
  CHECK(f.outs["y"] == std::vector<double>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("ulysses_all_to_all oracle: world 2, rank r gets its rows of every x side by side") {
  // M = 4, N = 2. Rank 0's x rows: [1 2] [3 4] [5 6] [7 8]; rank 1's: [11 12] ... [17 18].
  // Rank 0 gets rows 0-1 of both, rank 1 rows 2-3, each [2, 4]: rank 0's columns 0-1,
  // then rank 1's columns 2-3.
  const std::vector<std::vector<double>> x = {{1, 2, 3, 4, 5, 6, 7, 8},
                                              {11, 12, 13, 14, 15, 16, 17, 18}};
  const std::vector<std::vector<double>> want = {{1, 2, 11, 12, 3, 4, 13, 14},
                                                 {5, 6, 15, 16, 7, 8, 17, 18}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.inputs(x, {4, 2}, 8);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("ulysses_all_to_all oracle: world 3, one row and one column per piece") {
  // M = 3, N = 1: x(s) = [s0, s1, s2]; rank r's y is the 1 x 3 row [x(0)[r], x(1)[r], x(2)[r]].
  const std::vector<std::vector<double>> x = {{10, 11, 12}, {20, 21, 22}, {30, 31, 32}};
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.inputs(x, {3, 1}, 3);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{10.0 + rank, 20.0 + rank, 30.0 + rank});
  }
}

TEST_CASE("ulysses_all_to_all oracle refuses uneven pieces and mismatched shapes") {
  std::string err;
  Fake uneven(2, 0);
  uneven.inputs({{1, 2, 3}, {4, 5, 6}}, {3, 1}, 3);
  CHECK_FALSE(uneven.run(&err));
  CHECK(err.find("not a multiple of world") != std::string::npos);

  Fake shapes(2, 1);
  shapes.inputs({{1, 2, 3, 4}, {5, 6, 7, 8}}, {2, 2}, 4);
  shapes.shapes["x"][1] = {4, 1};
  CHECK_FALSE(shapes.run(&err));
  CHECK(err.find("rank 1's x differs") != std::string::npos);

  Fake ysize(2, 0);
  ysize.inputs({{1, 2, 3, 4}, {5, 6, 7, 8}}, {2, 2}, 3);
  CHECK_FALSE(ysize.run(&err));
  CHECK(err.find("y has 3 elements") != std::string::npos);
}
