

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's logits and target (row-major values and shapes) and this rank's loss.
struct Fake : OracleFake {
  Fake(int world, int rank) : OracleFake(world, rank) {}
  // logits[r] is rank r's [batch, seq, vl]; target[r] rank r's [batch, seq].
  void inputs(std::vector<std::vector<double>> logits, std::vector<std::vector<double>> target,
              int64_t batch, int64_t seq, int64_t vl) {
    shapes["logits"].assign(logits.size(), {batch, seq, vl});
    shapes["target"].assign(target.size(), {batch, seq});
    in["logits"] = std::move(logits);
    in["target"] = std::move(target);
    outs["loss"] = std::vector<double>(static_cast<size_t>(batch * seq), -7);  // poison
  }
  bool run(std::string* err) { return run_oracle("vocab_parallel_cross_entropy", err); }
};

}  // namespace

TEST_CASE("vocab_parallel_cross_entropy oracle: world 1, log-sum-exp less the label's logit") {
  REQUIRE(problem_oracle("vocab_parallel_cross_entropy").loaded());
  // Two tokens, V = 3. Token 0: all logits 0, label 1: log 3. Token 1: [1, 2, 3], label 2:
  // log(e + e^2 + e^3) - 3. Large logits must not overflow: [1000, 1000, 1000] gives log 3.
  Fake f(1, 0);
  f.inputs({{0, 0, 0, 1, 2, 3, 1000, 1000, 1000}}, {{1, 2, 0}}, 1, 3, 3);
  std::string err;
  REQUIRE(f.run(&err));
  const double e = std::exp(1.0);
  CHECK(f.outs["loss"][0] == doctest::Approx(std::log(3.0)).epsilon(1e-12));
  CHECK(f.outs["loss"][1] == doctest::Approx(std::log(e + e * e + e * e * e) - 3).epsilon(1e-12));
  CHECK(f.outs["loss"][2] == doctest::Approx(std::log(3.0)).epsilon(1e-12));
}

TEST_CASE("vocab_parallel_cross_entropy oracle: world 2, the label is rank 0's, the loss on all") {
  // batch 1, seq 2, V = 4, V/world = 2. Token 0: z = [1, 2 | 3, 4], label 2 (rank 1's
  // first entry): log(e + e^2 + e^3 + e^4) - 3. Token 1: z = [0, 0 | 0, 5], label 1 (rank
  // 0's second entry): log(3 + e^5) - 0. Rank 1's own target [0, 3] must be ignored.
  const std::vector<std::vector<double>> logits = {{1, 2, 0, 0}, {3, 4, 0, 5}};
  const std::vector<std::vector<double>> target = {{2, 1}, {0, 3}};
  const double e = std::exp(1.0);
  const double want0 = std::log(e + e * e + e * e * e + e * e * e * e) - 3;
  const double want1 = std::log(3 + std::exp(5.0));
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank);
    f.inputs(logits, target, 1, 2, 2);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["loss"][0] == doctest::Approx(want0).epsilon(1e-12));
    CHECK(f.outs["loss"][1] == doctest::Approx(want1).epsilon(1e-12));
  }
}

TEST_CASE("vocab_parallel_cross_entropy oracle: world 3, one entry per rank") {
  // V = 3, one token: z = [0, ln 2, ln 5] (sum of exp = 8), label 0: log 8.
  const std::vector<std::vector<double>> logits = {{0}, {std::log(2.0)}, {std::log(5.0)}};
  for (int rank = 0; rank < 3; ++rank) {
    Fake f(3, rank);
    f.inputs(logits, {{0}, {1}, {2}}, 1, 1, 1);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["loss"][0] == doctest::Approx(std::log(8.0)).epsilon(1e-12));
  }
}

TEST_CASE("vocab_parallel_cross_entropy oracle refuses bad labels and mismatched shapes") {
  std::string err;
  Fake label(2, 0);
  label.inputs({{1, 2}, {3, 4}}, {{4}, {0}}, 1, 1, 2);  // V = 4: labels are 0..3
  CHECK_FALSE(label.run(&err));
  CHECK(err.find("not a label in [0, 3]") != std::string::npos);

  Fake shapes(2, 1);
  shapes.inputs({{1, 2}, {3, 4}}, {{0}, {0}}, 1, 1, 2);
  shapes.shapes["logits"][1] = {1, 2, 1};
  CHECK_FALSE(shapes.run(&err));
  CHECK(err.find("rank 1's logits differ") != std::string::npos);

  Fake out(1, 0);
  out.inputs({{1, 2}}, {{0}}, 1, 1, 2);
  out.outs["loss"].resize(2);
  CHECK_FALSE(out.run(&err));
  CHECK(err.find("loss has 2") != std::string::npos);
}
