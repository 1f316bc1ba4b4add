#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/oracle_fake.h"

namespace {

// Every rank's logits and target (row-major values and shapes), the filters' parameters,
// and this rank's logp.
struct Fake : OracleFake {
  Fake(int world, int rank, double top_k, double top_p, double boost) : OracleFake(world, rank) {
    io.params = {{"top_k", top_k}, {"top_p", top_p}, {"boost", boost}};
  }
  // logits[r] is rank r's [batch, seq, vl]; target[r] rank r's [batch, seq].
  void inputs(std::vector<std::vector<double>> logits, std::vector<std::vector<double>> target,
              int64_t batch, int64_t seq, int64_t vl) {
    shapes["logits"].assign(logits.size(), {batch, seq, vl});
    shapes["target"].assign(target.size(), {batch, seq});
    in["logits"] = std::move(logits);
    in["target"] = std::move(target);
    outs["logp"] = std::vector<double>(static_cast<size_t>(batch * seq), -7);  // poison
  }
  bool run(std::string* err) { return run_oracle("vocab_parallel_log_prob_topk", err); }
};

const double kLn2 = std::log(2.0), kLn3 = std::log(3.0), kLn5 = std::log(5.0);

}  // namespace

TEST_CASE("vocab_parallel_log_prob_topk oracle: top-k keeps the k largest and their ties") {
  REQUIRE(problem_oracle("vocab_parallel_log_prob_topk").loaded());
  // World 1, V = 4, k = 2, no top-p (p = 1), no boost. Token 0: [0, ln 2, ln 3, ln 5], label
  // 3: the kept {ln 3, ln 5} give ln(5 / 8). Token 1: the same row, label 0: filtered, -inf.
  // Token 2: [1, 1, 1, 0], label 0: the 2nd largest is 1, so all three 1s stay: -ln 3.
  Fake f(1, 0, 2, 1.0, 0);
  f.inputs({{0, kLn2, kLn3, kLn5, 0, kLn2, kLn3, kLn5, 1, 1, 1, 0}}, {{3, 0, 0}}, 1, 3, 4);
  std::string err;
  REQUIRE(f.run(&err));
  CHECK(f.outs["logp"][0] == doctest::Approx(std::log(5.0 / 8)).epsilon(1e-12));
  CHECK(f.outs["logp"][1] == -INFINITY);
  CHECK(f.outs["logp"][2] == doctest::Approx(-kLn3).epsilon(1e-12));
}

TEST_CASE("vocab_parallel_log_prob_topk oracle: top-p drops the ascending prefix of mass 1 - p") {
  // World 1, V = 4, k = 4, p = 0.6: row ln[1, 2, 3, 4] has probabilities 0.1, 0.2, 0.3, 0.4,
  // cumulative 0.1, 0.3, 0.6, 1; the first two are <= 0.4 and go. Label 3 (ln 4): ln(4 / 7);
  // label 1 (ln 2): dropped, -inf. With p = 1e-9 only the last entry stays: label 3 gives 0.
  const std::vector<double> row = {0, kLn2, kLn3, 2 * kLn2};
  Fake f(1, 0, 4, 0.6, 0);
  f.inputs({{row[0], row[1], row[2], row[3], row[0], row[1], row[2], row[3]}}, {{3, 1}}, 2, 1, 4);
  std::string err;
  REQUIRE(f.run(&err));
  CHECK(f.outs["logp"][0] == doctest::Approx(std::log(4.0 / 7)).epsilon(1e-12));
  CHECK(f.outs["logp"][1] == -INFINITY);

  Fake tiny(1, 0, 4, 1e-9, 0);
  tiny.inputs({row}, {{3}}, 1, 1, 4);
  REQUIRE(tiny.run(&err));
  CHECK(tiny.outs["logp"][0] == 0);
}

TEST_CASE("vocab_parallel_log_prob_topk oracle: world 2, shards side by side, labels by block") {
  // batch 1, seq 2, V = 4 (2 per rank), T = 1, k = 4, p = 1, boost ln 3. Token 0 belongs to
  // rank 0, label rank 0's target[0] = 2: z = [0, 0 | ln 3, 0], logp = ln 3 - ln 6 = -ln 2.
  // Token 1 belongs to rank 1, label rank 1's target[1] = 1: z = [0, ln 2 + ln 3 | 0, 0],
  // logp = ln 6 - ln 9. Rank 0's target[1] and rank 1's target[0] must be ignored.
  const std::vector<std::vector<double>> logits = {{0, 0, 0, kLn2}, {0, 0, 0, 0}};
  const std::vector<std::vector<double>> target = {{2, 3}, {0, 1}};
  for (int rank = 0; rank < 2; ++rank) {
    Fake f(2, rank, 4, 1.0, kLn3);
    f.inputs(logits, target, 1, 2, 2);
    std::string err;
    REQUIRE(f.run(&err));
    CHECK(f.outs["logp"][0] == doctest::Approx(-kLn2).epsilon(1e-12));
    CHECK(f.outs["logp"][1] == doctest::Approx(std::log(6.0 / 9)).epsilon(1e-12));
  }
}

TEST_CASE("vocab_parallel_log_prob_topk oracle refuses bad labels and mismatched shapes") {
  std::string err;
  Fake label(2, 0, 1, 0.9, 8);
  label.inputs({{1, 2, 3, 4}, {5, 6, 7, 8}}, {{0, 0}, {0, 4}}, 1, 2, 2);  // V = 4: 0..3
  CHECK_FALSE(label.run(&err));
  CHECK(err.find("rank 1's target[1] = 4") != std::string::npos);

  Fake shapes(2, 1, 1, 0.9, 8);
  shapes.inputs({{1, 2, 3, 4}, {5, 6, 7, 8}}, {{0, 0}, {0, 0}}, 1, 2, 2);
  shapes.shapes["logits"][1] = {1, 4, 1};
  CHECK_FALSE(shapes.run(&err));
  CHECK(err.find("rank 1's logits or target differ") != std::string::npos);

  Fake rows(2, 0, 1, 0.9, 8);
  rows.inputs({{1, 2}, {3, 4}}, {{0}, {0}}, 1, 1, 2);  // one token over two ranks
  CHECK_FALSE(rows.run(&err));
  CHECK(err.find("multiple of world") != std::string::npos);
}
