#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

using Vec = std::vector<double>;

// Every rank's q, k [B, S, H, D] and cos, sin [B, S, D]; this rank's q_out and k_out
// [B, world * S, H, D], poisoned.
struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  void tensors(int64_t B, int64_t S, int64_t H, int64_t D, std::vector<Vec> q, std::vector<Vec> k,
               std::vector<Vec> cos, std::vector<Vec> sin) {
    const int64_t world = io.world;
    shapes["q"].assign(static_cast<size_t>(world), {B, S, H, D});
    shapes["k"] = shapes["q"];
    shapes["cos"].assign(static_cast<size_t>(world), {B, S, D});
    shapes["sin"] = shapes["cos"];
    shapes["q_out"].assign(static_cast<size_t>(world), {B, world * S, H, D});
    shapes["k_out"] = shapes["q_out"];
    in["q"] = std::move(q), in["k"] = std::move(k);
    in["cos"] = std::move(cos), in["sin"] = std::move(sin);
    outs["q_out"] = Vec(static_cast<size_t>(world * B * S * H * D), -7);
    outs["k_out"] = outs["q_out"];
  }
  bool run(std::string* err) { return run_oracle("rope_all_gather", err); }
};

}  // namespace

TEST_CASE("rope_all_gather oracle: world 1, one head of 2, rotate_half negates the top half") {
  REQUIRE(problem_oracle("rope_all_gather").loaded());
  // q = [1, 2]: rot = [-2, 1]; cos = [3, 5], sin = [7, 11]:
  //   q_out = [1*3 + (-2)*7, 2*5 + 1*11] = [-11, 21].
  // k = [0.5, -1]: rot = [1, 0.5]: k_out = [0.5*3 + 1*7, -1*5 + 0.5*11] = [8.5, 0.5].
  Fake f(1, 0);
  f.tensors(1, 1, 1, 2, {{1, 2}}, {{0.5, -1}}, {{3, 5}}, {{7, 11}});
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["q_out"] == Vec{-11, 21});
  CHECK(f.outs["k_out"] == Vec{8.5, 0.5});
}

TEST_CASE("rope_all_gather oracle: D = 4, two heads share one cos/sin row, halves swap") {
  // cos = [1, 2, 3, 4], sin = [10, 20, 30, 40]. Head 0 = [1, 0, 0, 0]: rot = [0, 0, 1, 0],
  // so [1*1, 0, 1*30, 0]. Head 1 = [0, 0, 0, 1]: rot = [0, -1, 0, 0], so [0, -20, 0, 4].
  Fake f(1, 0);
  f.tensors(1, 1, 2, 4, {{1, 0, 0, 0, 0, 0, 0, 1}}, {{0, 0, 0, 0, 0, 0, 0, 0}}, {{1, 2, 3, 4}},
            {{10, 20, 30, 40}});
  std::string err;
  REQUIRE_MESSAGE(f.run(&err), err);
  CHECK(f.outs["q_out"] == Vec{1, 0, 30, 0, 0, -20, 0, 4});
  CHECK(f.outs["k_out"] == Vec(8, 0));
}

TEST_CASE("rope_all_gather oracle: world 2 lays each rank's slice along every batch's sequence") {
  // B = 2, S = 1, H = 1, D = 2. Rank 0: cos = 1, sin = 0 (identity); rank 1: cos = 0,
  // sin = 1 (rot alone). q(0) = [1,2 | 3,4], q(1) = [5,6 | 7,8] (batch 0 | batch 1):
  //   q_out = [batch 0: 1,2 then rot(5,6) = -6,5 | batch 1: 3,4 then rot(7,8) = -8,7].
  // k(0) = [0,0 | 1,0], k(1) = [0,1 | 0,0]: k_out = [0,0, -1,0 | 1,0, 0,0].
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.tensors(2, 1, 1, 2, {{1, 2, 3, 4}, {5, 6, 7, 8}}, {{0, 0, 1, 0}, {0, 1, 0, 0}},
              {{1, 1, 1, 1}, {0, 0, 0, 0}}, {{0, 0, 0, 0}, {1, 1, 1, 1}});
    std::string err;
    REQUIRE_MESSAGE(f.run(&err), err);
    CHECK(f.outs["q_out"] == Vec{1, 2, -6, 5, 3, 4, -8, 7});
    CHECK(f.outs["k_out"] == Vec{0, 0, -1, 0, 1, 0, 0, 0});
  }
}

TEST_CASE("rope_all_gather oracle refuses inputs and outputs of the wrong shape") {
  std::string err;
  Fake f(2, 0);
  f.tensors(1, 1, 1, 2, {{1, 2}, {3, 4}}, {{1, 2}, {3}}, {{1, 1}, {1, 1}}, {{0, 0}, {0, 0}});
  CHECK_FALSE(f.run(&err));  // rank 1's k is one short
  CHECK(err.find("rank 1's k") != std::string::npos);
  Fake g(1, 0);
  g.tensors(1, 1, 1, 2, {{1, 2}}, {{1, 2}}, {{1, 1}}, {{0, 0}});
  g.shapes["q"][0] = {2};  // a flat q
  CHECK_FALSE(g.run(&err));
  CHECK(err.find("[B, S, H, D]") != std::string::npos);
  Fake h(1, 0);
  h.tensors(1, 1, 1, 2, {{1, 2}}, {{1, 2}}, {{1, 1}}, {{0, 0}});
  h.outs["k_out"] = Vec(3, 0);  // k_out of the wrong length
  CHECK_FALSE(h.run(&err));
  CHECK(err.find("k_out") != std::string::npos);
}
