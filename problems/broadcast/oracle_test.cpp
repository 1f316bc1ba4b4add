#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

struct Fake : OracleFake {
  Fake(int world, int rank, double root) : OracleFake(world, rank) { io.params["root"] = root; }
  bool run(std::string* err) { return run_oracle("broadcast", err); }
};

}  // namespace

TEST_CASE("broadcast oracle copies the root's x to every rank") {
  REQUIRE(problem_oracle("broadcast").loaded());
  const std::vector<std::vector<double>> x = {{1, 2}, {3, 4}, {5, 6}};
  for (int root = 0; root < 3; ++root) {
    for (int rank = 0; rank < 3; ++rank) {
      Fake f(3, rank, root);
      f.in["x"] = x;
      f.outs["y"] = std::vector<double>(2, -1);
      std::string err;
      REQUIRE(f.run(&err));
      CHECK(f.outs["y"] == x[static_cast<size_t>(root)]);
    }
  }
  Fake f(2, 0, 1);
  f.in["x"] = {{0.5}, {-0.25}};
  f.outs["y"] = {9};
  std::string err;
  REQUIRE(f.run(&err));
  CHECK(f.outs["y"][0] == -0.25);
}

TEST_CASE("broadcast oracle refuses a root outside the world") {
  Fake f(2, 0, 2);
  f.in["x"] = {{1}, {2}};
  f.outs["y"] = {0};
  std::string err;
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("root = 2") != std::string::npos);
  Fake g(2, 0, -1);
  g.in["x"] = {{1}, {2}};
  g.outs["y"] = {0};
  CHECK_FALSE(g.run(&err));
}
