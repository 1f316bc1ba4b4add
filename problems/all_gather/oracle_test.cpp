#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  bool run(std::string* err) { return run_oracle("all_gather", err); }
};

}  // namespace

TEST_CASE("all_gather oracle concatenates in rank order, the same on every rank") {
  REQUIRE(problem_oracle("all_gather").loaded());
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.in["x"] = {{1, 2}, {3, 4}, {5, 6}};
    f.outs["y"] = std::vector<double>(6, -1);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{1, 2, 3, 4, 5, 6});
  }
  Fake f(2, 1);
  f.in["x"] = {{0.5, -0.5, 9}, {7, 8, -1}};
  f.outs["y"] = std::vector<double>(6, -1);
  std::string err;
  REQUIRE(f.run(&err));
  CHECK(f.outs["y"] == std::vector<double>{0.5, -0.5, 9, 7, 8, -1});
}

TEST_CASE("all_gather oracle refuses unequal inputs and a y of the wrong length") {
  std::string err;
  Fake a(2, 0);
  a.in["x"] = {{1, 2}, {3}};
  a.outs["y"] = std::vector<double>(4, 0);
  CHECK_FALSE(a.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake b(2, 0);
  b.in["x"] = {{1, 2}, {3, 4}};
  b.outs["y"] = std::vector<double>(3, 0);
  CHECK_FALSE(b.run(&err));
}
