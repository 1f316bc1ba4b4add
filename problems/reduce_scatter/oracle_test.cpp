#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  bool run(std::string* err) { return run_oracle("reduce_scatter", err); }
};

}  // namespace

TEST_CASE("reduce_scatter oracle: rank r gets the sum of chunk r, world 2") {
  REQUIRE(problem_oracle("reduce_scatter").loaded());
  // n = 2: x = [chunk 0 | chunk 1].
  const std::vector<std::vector<double>> x = {{1, 2, 3, 4}, {10, 20, 30, 40}};
  const std::vector<std::vector<double>> want = {{11, 22}, {33, 44}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.in["x"] = x;
    f.outs["y"] = std::vector<double>(2, -7);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == want[static_cast<size_t>(rank)]);
  }
}

TEST_CASE("reduce_scatter oracle, world 3 and world 1") {
  // n = 1: rank r's y is x(0)[r] + x(1)[r] + x(2)[r].
  const std::vector<std::vector<double>> x = {{1, 2, 3}, {100, 200, 300}, {0.5, -2, -0.25}};
  const std::vector<double> want = {101.5, 200, 302.75};
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.in["x"] = x;
    f.outs["y"] = {0};
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"][0] == want[static_cast<size_t>(rank)]);
  }
  Fake f(1, 0);
  f.in["x"] = {{4, 5, 6}};
  f.outs["y"] = std::vector<double>(3, 0);
  std::string err;
  REQUIRE(f.run(&err));
  CHECK(f.outs["y"] == std::vector<double>{4, 5, 6});
}

TEST_CASE("reduce_scatter oracle refuses an x that is not world * |y| long") {
  Fake f(2, 0);
  f.in["x"] = {{1, 2, 3, 4}, {1, 2, 3}};
  f.outs["y"] = std::vector<double>(2, 0);
  std::string err;
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
}
