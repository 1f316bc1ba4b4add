#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// An OracleIO over literal per-rank inputs: what the sandbox builds from the generator.
struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  bool run(std::string* err) { return run_oracle("all_reduce", err); }
};

}  // namespace

TEST_CASE("all_reduce oracle sums every rank's x, on every rank") {
  REQUIRE(problem_oracle("all_reduce").loaded());
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.in["x"] = {{1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}, {-100, 0.5, 0, 0.25, -5}};
    f.outs["y"] = std::vector<double>(5, -1);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{-89, 22.5, 33, 44.25, 50});
  }
}

TEST_CASE("all_reduce oracle at world 1 and 2") {
  {
    Fake f(1, 0);
    f.in["x"] = {{0.5, -0.25, 7}};
    f.outs["y"] = std::vector<double>(3, 99);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{0.5, -0.25, 7});
  }
  {
    Fake f(2, 1);
    f.in["x"] = {{1, -1, 0.5}, {2, 1, 0.25}};
    f.outs["y"] = std::vector<double>(3, 99);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{3, 0, 0.75});
  }
}

TEST_CASE("all_reduce oracle refuses a rank whose x is not as long as y") {
  Fake f(2, 0);
  f.in["x"] = {{1, 2, 3}, {1, 2}};
  f.outs["y"] = std::vector<double>(3, 0);
  std::string err;
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
}
