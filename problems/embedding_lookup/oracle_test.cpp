#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's indices ([n]) and table ([rows, dim]), and this rank's y, poisoned: the
// oracle must write all of it.
struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  void inputs(std::vector<std::vector<double>> indices, std::vector<std::vector<double>> tables,
              int64_t rows, int64_t dim) {
    const size_t world = indices.size();
    const int64_t n = static_cast<int64_t>(indices[0].size());
    shapes["indices"].assign(world, {n});
    shapes["table"].assign(world, {rows, dim});
    in["indices"] = std::move(indices);
    in["table"] = std::move(tables);
    outs["y"] = std::vector<double>(static_cast<size_t>(n * dim), -7);
  }
  bool run(std::string* err) { return run_oracle("embedding_lookup", err); }
};

// Rank s's table, [rows, 2]: row k is global row v = s * rows + k, holding [v, -v - 0.5].
std::vector<double> table_of(int s, int rows) {
  std::vector<double> t;
  for (int k = 0; k < rows; ++k) {
    const double v = s * rows + k;
    t.insert(t.end(), {v, -v - 0.5});
  }
  return t;
}

// The y of global rows `vs`, each [v, -v - 0.5].
std::vector<double> rows_of(const std::vector<double>& vs) {
  std::vector<double> y;
  for (double v : vs) y.insert(y.end(), {v, -v - 0.5});
  return y;
}

}  // namespace

TEST_CASE("embedding_lookup oracle: the description's world-2 example, grouped by owner") {
  REQUIRE(problem_oracle("embedding_lookup").loaded());
  // rows = 2, V = 4. Rank 0's indices [3, 0, 2, 1] have owners [1, 0, 1, 0]: rank 0's
  // rows 0 and 1 first, in index order, then rank 1's 3 and 2. Rank 1's [2, 2, 1, 0]
  // (owners [1, 1, 0, 0], a repeat): 1, 0, then 2, 2.
  const std::vector<std::vector<double>> indices = {{3, 0, 2, 1}, {2, 2, 1, 0}};
  const std::vector<std::vector<double>> want = {{0, 1, 3, 2}, {1, 0, 2, 2}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.inputs(indices, {table_of(0, 2), table_of(1, 2)}, 2, 2);
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["y"] == rows_of(want[static_cast<size_t>(rank)]));
  }
}

TEST_CASE("embedding_lookup oracle: world 1 is the plain lookup, in index order") {
  Fake f(1, 0);
  f.inputs({{2, 0, 2, 1, 0}}, {table_of(0, 3)}, 3, 2);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["y"] == rows_of({2, 0, 2, 1, 0}));
}

TEST_CASE("embedding_lookup oracle: world 4, owners with no index and uneven counts") {
  // rows = 3, V = 12. Rank 2's indices [11, 4, 10, 5, 3]: owners [3, 1, 3, 1, 1]; ranks 0
  // and 2 own none, so y is rank 1's rows 4, 5, 3 then rank 3's 11, 10. The other ranks'
  // indices do not matter to rank 2's y.
  std::vector<std::vector<double>> indices(4, std::vector<double>{0, 1, 2, 3, 4});
  indices[2] = {11, 4, 10, 5, 3};
  Fake f(4, 2);
  f.inputs(indices, {table_of(0, 3), table_of(1, 3), table_of(2, 3), table_of(3, 3)}, 3, 2);
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["y"] == rows_of({4, 5, 3, 11, 10}));
}

TEST_CASE("embedding_lookup oracle refuses indices out of range and inconsistent shapes") {
  std::string err;
  Fake f(2, 0);
  f.inputs({{3, 4, 0}, {0, 1, 2}}, {table_of(0, 2), table_of(1, 2)}, 2, 2);  // 4 >= V = 4
  CHECK_FALSE(f.run(&err));
  CHECK(err.find("outside") != std::string::npos);
  Fake g(2, 1);
  g.inputs({{3, 1, 0}, {0, 1, 2}}, {table_of(0, 2), table_of(1, 2)}, 2, 2);
  g.shapes["table"][1] = {1, 4};  // rank 1 holds a differently shaped table
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("rank 1") != std::string::npos);
  Fake h(2, 0);
  h.inputs({{3, 1, 0}, {0, 1, 2}}, {table_of(0, 2), table_of(1, 2)}, 2, 2);
  h.outs["y"].pop_back();  // y one element short
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("y has") != std::string::npos);
}
