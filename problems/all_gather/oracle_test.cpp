#include "oracle.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

namespace {

struct Fake {
  std::map<std::string, std::vector<std::vector<double>>> in;
  std::map<std::string, std::vector<double>> outs;
  std::vector<int64_t> dummy_shape;
  sandbox::OracleIO io;

  Fake(int world, int rank) {
    io.world = world;
    io.rank = rank;
    io.input = [this](const std::string& name, int r) -> const std::vector<double>& {
      return in.at(name).at(static_cast<size_t>(r));
    };
    io.shape = [this](const std::string&, int) -> const std::vector<int64_t>& {
      return dummy_shape;
    };
    io.out = [this](const std::string& name) -> std::vector<double>& { return outs.at(name); };
  }
  bool run(std::string* err) { return sandbox::find_oracle("all_gather")(io, err); }
};

}  // namespace

TEST_CASE("all_gather oracle concatenates in rank order, the same on every rank") {
  REQUIRE(static_cast<bool>(sandbox::find_oracle("all_gather")));
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
