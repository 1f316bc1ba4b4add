#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// An OracleIO over literal per-rank inputs: what the sandbox builds from the generator.
struct Fake : OracleFake {
  Fake(int world, int rank, double root) : OracleFake(world, rank) { io.params["root"] = root; }
  bool run(std::string* err) { return run_oracle("reduce", err); }
};

}  // namespace

TEST_CASE("reduce oracle: the root gets the sum, every other rank its own x") {
  REQUIRE(problem_oracle("reduce").loaded());
  // Three ranks, a 2 x 3 matrix each (row-major; the oracle sees flat values).
  const std::vector<std::vector<double>> x = {
      {1, 2, 3, 4, 5, 6}, {10, 20, 30, 40, 50, 60}, {-100, 0.5, 0, 0.25, -5, -66}};
  const std::vector<double> sum = {-89, 22.5, 33, 44.25, 50, 0};
  for (int root = 0; root < 3; ++root) {
    for (int rank = 0; rank < 3; ++rank) {
      Fake f(3, rank, root);
      f.in["x"] = x;
      f.outs["y"] = std::vector<double>(6, -1);
      std::string err;
      REQUIRE(f.run(&err));
      if (rank == root)
        CHECK(f.outs["y"] == sum);
      else
        CHECK(f.outs["y"] == x[static_cast<size_t>(rank)]);
    }
  }
}

TEST_CASE("reduce oracle at world 1 and 2") {
  {
    Fake f(1, 0, 0);  // alone, the root's sum is its own x
    f.in["x"] = {{0.5, -0.25, 7}};
    f.outs["y"] = std::vector<double>(3, 99);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{0.5, -0.25, 7});
  }
  {
    Fake f(2, 1, 1);
    f.in["x"] = {{1, -1, 0.5}, {2, 1, 0.25}};
    f.outs["y"] = std::vector<double>(3, 99);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{3, 0, 0.75});
  }
  {
    Fake f(2, 0, 1);  // rank 0 is not the root: it keeps its x
    f.in["x"] = {{1, -1, 0.5}, {2, 1, 0.25}};
    f.outs["y"] = std::vector<double>(3, 99);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["y"] == std::vector<double>{1, -1, 0.5});
  }
}

TEST_CASE("reduce oracle refuses a root outside the world and a short x") {
  std::string err;
  Fake f(2, 0, 2);
  f.in["x"] = {{1}, {2}};
  f.outs["y"] = {0};
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("root = 2") != std::string::npos);
  Fake g(2, 0, -1);
  g.in["x"] = {{1}, {2}};
  g.outs["y"] = {0};
  CHECK_FALSE(g.run(&err));
  Fake h(2, 0, 0);
  h.in["x"] = {{1, 2, 3}, {1, 2}};
  h.outs["y"] = std::vector<double>(3, 0);
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
}
