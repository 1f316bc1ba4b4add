// tests/sweep_script.h: the scripted sweep the sweep tests share (tests/sweep_test.cpp,
// here on this machine; tests/sweep_slurm_test.cpp, as a Slurm array): the loopback LLM
// server's replies keyed to each sample's problem and seed (so a sample gets the same
// reply whenever and wherever it runs), the five collectives x 4 samples mix, the sweep's
// arguments, and the mix's pass@k computed by hand.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kf_build_paths.h"
#include "sweep/ledger.h"
#include "tests/solve_harness.h"

namespace sweep_script {

using solve_test::Harness;
using solve_test::json;
using Plan = std::vector<std::pair<std::string, std::string>>;

inline std::string example(const std::string& problem) {
  return solve_test::read_file(std::string(KF_SOURCE_ROOT) + "/problems/" + problem +
                               "/examples/host.cpp");
}
// Returns at once: its outputs keep the sandbox's poison, a mismatch on every problem.
inline const char* kDoesNothing =
    "#include <kf/kf.h>\nextern \"C\" int kf_run(kf::Comm&, kf::Tensors&) { return 0; }\n";

// The reply for sample `seed` of `problem`: 'r' right, 'w' wrong, 'b' does not compile,
// 'e' an HTTP 400 (the provider fails: the sample fails, and is retried).
inline json step(const std::string& problem, int seed, char what) {
  json s;
  if (what == 'e') {
    s = {{"status", 400}, {"body", fake_llm::openai_error("invalid_request_error", "scripted")}};
  } else {
    std::string src = what == 'r'   ? example(problem)
                      : what == 'w' ? std::string(kDoesNothing)
                                    : solve_test::broken_kernel();
    s = solve_test::openai_ok(solve_test::fenced("cpp", src));
  }
  // prompts/task.md's first line, and the sample's seed (the body's keys are sorted).
  s["when"] = {"Problem: " + problem + " (", "\"seed\":" + std::to_string(seed)};
  return s;
}

// One step per sample: whats[i] is sample i's reply.
inline json script(const Plan& plan) {
  json s = json::array();
  for (const auto& [problem, whats] : plan)
    for (size_t i = 0; i < whats.size(); ++i) s.push_back(step(problem, int(i), whats[i]));
  return s;
}

// The sweeps cover five collectives, by name (kMix scripts replies for those alone; the
// suite's other problems, reduce among the collectives, would get none).
inline const std::vector<std::string> kCollectives = {"all_reduce", "all_gather", "reduce_scatter",
                                                      "all_to_all", "broadcast"};

// Correct samples: all_reduce 4, all_gather 2, reduce_scatter 1, all_to_all 0,
// broadcast 3; wrong 5, not compiling 5.
inline const Plan kMix = {{"all_reduce", "rrrr"},
                          {"all_gather", "rwrb"},
                          {"reduce_scatter", "wwwr"},
                          {"all_to_all", "bbbb"},
                          {"broadcast", "rrwr"}};

inline std::vector<std::string> sweep_args(Harness& h, const fake_llm::Server& server,
                                           const std::string& out,
                                           std::vector<std::string> problems, int samples,
                                           int jobs) {
  std::string cfg = h.dir() + "/llm.json";
  std::ofstream(cfg) << json{{"stream", false}, {"timeouts", {{"total_s", 60}}}}.dump();
  std::vector<std::string> a = {"sweep"};
  a.insert(a.end(), problems.begin(), problems.end());
  a.insert(a.end(), {"--samples",
                     std::to_string(samples),
                     "--jobs",
                     std::to_string(jobs),
                     "--model",
                     "openai:test-model",
                     "--base-url",
                     server.url() + "/v1",
                     "--config",
                     cfg,
                     "--max-turns",
                     "1",
                     "--backend",
                     "host",
                     "--world",
                     "2",
                     "--size",
                     "small",
                     "--no-time",
                     "--out",
                     out});
  return a;
}

inline json status(Harness& h, const std::string& out) {
  std::string text;
  CHECK(h.kforge({"sweep", "status", out, "--json"}, &text) == 0);
  size_t at = text.find('{');
  REQUIRE(at != std::string::npos);
  return json::parse(text.substr(at));
}

inline json row(const json& st, const std::string& scope) {
  for (const json& r : st["rows"])
    if (r["scope"] == scope) return r["m"];
  FAIL("no row " << scope);
  return json();
}

inline double at_k(const json& m, int k) {
  for (const json& kv : m["pass"])
    if (kv["k"] == k) return kv["value"].get<double>();
  FAIL("no pass@" << k);
  return -1;
}

// kMix's numbers, by hand: pass@k = 1 - C(4-c, k) / C(4, k) per problem, and the mean
// over the five problems for the model and its category.
inline void check_mix_numbers(const json& st) {
  CHECK(st["done"] == 20);
  CHECK(st["failed"] == 0);
  CHECK(st["pending"] == 0);
  CHECK(at_k(row(st, "all_reduce"), 1) == doctest::Approx(1.0));
  CHECK(at_k(row(st, "all_gather"), 1) == doctest::Approx(0.5));
  CHECK(at_k(row(st, "all_gather"), 2) == doctest::Approx(5.0 / 6.0));  // 1 - 1/6
  CHECK(at_k(row(st, "reduce_scatter"), 2) == doctest::Approx(0.5));    // 1 - 3/6
  CHECK(at_k(row(st, "all_to_all"), 4) == doctest::Approx(0.0));
  CHECK(at_k(row(st, "broadcast"), 1) == doctest::Approx(0.75));
  json all = row(st, "all");
  CHECK(all["n"] == 20);
  CHECK(all["correct"] == 10);
  CHECK(at_k(all, 1) == doctest::Approx((1 + 0.5 + 0.25 + 0 + 0.75) / 5));
  CHECK(at_k(all, 2) == doctest::Approx((1 + 5.0 / 6 + 0.5 + 0 + 1) / 5));
  CHECK(at_k(all, 4) == doctest::Approx(0.8));
  CHECK(row(st, "category:collective")["pass"] == all["pass"]);
  // The host backend measures no speed: no fast_p, no geomean.
  CHECK(all["speed_measured"] == false);
  CHECK(all["fast"].empty());
  CHECK(all["geomean_speedup"].is_null());
  // Every correct sample was correct at turn 1, after one reply of 12 + 30 tokens.
  CHECK(all["turns_to_correct"].get<double>() == doctest::Approx(1.0));
  CHECK(all["tokens_to_correct"].get<double>() == doctest::Approx(42.0));
  json v = st["verdicts"]["openai:test-model"];
  CHECK(v["correct"] == 10);
  CHECK(v["compile_error"] == 5);
}

inline int done_count(const std::string& out) {
  std::vector<sweep::Record> recs;
  int torn = 0;
  std::string err;
  sweep::read_ledgers(out, &recs, &torn, &err);
  return static_cast<int>(sweep::finished(recs).size());
}

// "problem/seed" of each request the server got.
inline std::multiset<std::string> asked(const fake_llm::Server& s) {
  std::multiset<std::string> out;
  for (const json& r : s.requests()) {
    std::string text = r["body"]["messages"].dump();
    size_t at = text.find("Problem: ");
    std::string problem = text.substr(at + 9, text.find(' ', at + 9) - at - 9);
    out.insert(problem + "/" + std::to_string(r["body"].value("seed", -1)));
  }
  return out;
}

}  // namespace sweep_script
