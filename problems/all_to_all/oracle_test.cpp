#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  bool run(std::string* err) { return run_oracle("all_to_all", err); }
};

}  // namespace

TEST_CASE("all_to_all oracle transposes chunks, world 2 and 3") {
  REQUIRE(problem_oracle("all_to_all").loaded());
  {
    // n = 2. Rank 0: [a0 a1 | b0 b1] = [1 2 | 3 4]; rank 1: [5 6 | 7 8].
    const std::vector<std::vector<double>> x = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    const std::vector<std::vector<double>> want = {{1, 2, 5, 6}, {3, 4, 7, 8}};
    for (int rank = 0; rank < 2; ++rank) {
      Fake f(2, rank);
      f.in["x"] = x;
      f.outs["y"] = std::vector<double>(4, -1);
      std::string err;
      REQUIRE(f.run(&err));
      CHECK(f.outs["y"] == want[static_cast<size_t>(rank)]);
    }
  }
  {
    // n = 1: a 3x3 transpose. Rank s holds row s; rank r gets column r.
    const std::vector<std::vector<double>> x = {{11, 12, 13}, {21, 22, 23}, {31, 32, 33}};
    const std::vector<std::vector<double>> want = {{11, 21, 31}, {12, 22, 32}, {13, 23, 33}};
    for (int rank = 0; rank < 3; ++rank) {
      Fake f(3, rank);
      f.in["x"] = x;
      f.outs["y"] = std::vector<double>(3, -1);
      std::string err;
      REQUIRE(f.run(&err));
      CHECK(f.outs["y"] == want[static_cast<size_t>(rank)]);
    }
  }
}

TEST_CASE("all_to_all oracle at world 1 copies x, and refuses a y not divisible by world") {
  Fake f(1, 0);
  f.in["x"] = {{1, 2, 3}};
  f.outs["y"] = std::vector<double>(3, 0);
  std::string err;
  REQUIRE(f.run(&err));
  CHECK(f.outs["y"] == std::vector<double>{1, 2, 3});

  Fake g(2, 0);
  g.in["x"] = {{1, 2, 3}, {4, 5, 6}};
  g.outs["y"] = std::vector<double>(3, 0);
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("multiple of world") != std::string::npos);
}
