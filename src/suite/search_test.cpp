// suite/search_test.cpp: search.json's loader on a toy problem folder (every error names
// the file and the field), the templates and predictions it yields, and the real
// problems' files (their advice rule against the primitives' own).
#include <doctest/doctest.h>
#include <kf/partition.h>

#include "kf_build_paths.h"
#include "suite/analysis.h"
#include "suite/spec_json.h"
#include "suite/test_util.h"

using suite::test::all_reduce_json;
using suite::test::write_file;
using suite::test::write_problem;

namespace {

const char* const kSolution = R"(// a toy expert kernel
#ifndef KF_ALGO
#define KF_ALGO fast // fast | slow
#endif
#ifndef KF_BLOCKS
#define KF_BLOCKS 32 // grid maximum
#endif
#ifndef KF_THREADS
#define KF_THREADS 512
#endif
)";

const char* const kHost = "#ifndef KF_CHUNK_ELEMS\n#define KF_CHUNK_ELEMS 65536\n#endif\n";

suite::ojson toy_search() {
  return suite::ojson::parse(R"({
  "defaults": {"blocks": 32, "threads": 512, "chunk_elems": 65536},
  "cost": {"work": "x_bytes // 16"},
  "families": [
    {"source": "solution.cu", "mech": "reg", "algo": "fast",
     "macros": {"KF_ALGO": "fast"}, "knobs": ["blocks", "threads"]},
    {"source": "solution.cu", "mech": "reg", "algo": "slow",
     "macros": {"KF_ALGO": "slow"}, "knobs": ["blocks"],
     "cost": {"comm_bytes": "(world - 1) * x_bytes", "hops": 3}},
    {"source": "solution_host.cpp", "mech": "host", "algo": "push", "knobs": ["chunk_elems"]}
  ],
  "advice": {"text": "Algorithm: slow moves {slow} and is {verdict}.",
             "values": {"slow": {"bytes": "(world - 1) * x_bytes"},
                        "verdict": {"if": "world <= 2", "then": "fine", "else": "slow"}}}
})");
}

// A toy problem folder with `search` as its search.json; returns the folder.
std::string toy(const suite::test::TempDir& tmp, const suite::ojson& search) {
  suite::ojson p = all_reduce_json();
  p["name"] = "toy";
  const std::string dir = write_problem(tmp.path, "toy", p.dump());
  write_file(dir + "/solution.cu", kSolution);
  write_file(dir + "/solution_host.cpp", kHost);
  write_file(dir + "/search.json", search.dump(2));
  return dir;
}

// Loading the toy with `search` fails with an error that contains `want`.
void fails_with(const suite::ojson& search, const std::string& want) {
  suite::test::TempDir tmp;
  const std::string dir = toy(tmp, search);
  suite::Problem p;
  std::string err;
  CHECK_FALSE(suite::load_problem(dir, &p, &err));
  INFO(err);
  CHECK(err.find(dir + "/search.json: ") == 0);
  CHECK(err.find(want) != std::string::npos);
}

suite::Instance inst_of(const suite::Problem& p, int world, std::vector<std::string> over = {}) {
  suite::Instance inst;
  std::string err;
  REQUIRE_MESSAGE(suite::resolve_instance(p, world, "full", over, &inst, &err), err);
  return inst;
}

}  // namespace

TEST_CASE("suite: search.json gives families, their templates, predictions and the advice") {
  suite::test::TempDir tmp;
  suite::Problem p;
  std::string err;
  REQUIRE_MESSAGE(suite::load_problem(toy(tmp, toy_search()), &p, &err), err);
  REQUIRE(p.search.families.size() == 3);
  CHECK(p.search.default_of(suite::Knob::blocks) == 32);
  const suite::Instance inst = inst_of(p, 4);
  auto space = suite::template_space(p, inst, sandbox::Backend::cuda);
  CHECK(space.size() == 5 * 2 + 5);  // fast: blocks x threads; slow: blocks
  CHECK(space[0].macros == std::vector<std::pair<std::string, std::string>>{
                               {"KF_ALGO", "fast"}, {"KF_BLOCKS", "8"}, {"KF_THREADS", "256"}});
  CHECK(space.back().name() == "reg/slow blocks=128");
  auto host = suite::template_space(p, inst, sandbox::Backend::host);
  REQUIRE(host.size() == 2);
  CHECK(host[0].macros ==
        std::vector<std::pair<std::string, std::string>>{{"KF_CHUNK_ELEMS", "1000"}});

  const suite::Machine m = suite::default_h200();
  const double S = 1048576.0 * 4;
  const suite::Prediction fast = suite::predict(space[0], inst, m);
  CHECK(fast.error.empty());
  CHECK(fast.comm_bytes == doctest::Approx(2.0 * 3 / 4 * S));  // problem.json's cost
  CHECK(fast.hops == 2);                                       // not a push: a round trip
  CHECK(fast.blocks == 8);
  const suite::Prediction slow = suite::predict(space.back(), inst, m);
  CHECK(slow.comm_bytes == doctest::Approx(3 * S));  // the family's own term
  CHECK(slow.hops == 3);
  CHECK(slow.blocks == 128);  // 2^18 vectors over the default 512 threads, at most 128
  CHECK(suite::predict(host[0], inst, m).hops == 1);  // a push is posted

  const std::string text = suite::analysis_text(p, inst, m);
  CHECK(text.find("- Algorithm: slow moves 12.00 MiB and is slow.\n") != std::string::npos);
  CHECK(suite::analysis_text(p, inst_of(p, 2), m).find("is fine.") != std::string::npos);

  suite::Template by_hand = space[0];
  by_hand.model = suite::TemplateModel();  // no search.json behind it
  CHECK(suite::predict(by_hand, inst, m).bound == "error");
  CHECK(suite::predict(by_hand, inst, m).error.find("no cost model") != std::string::npos);
}

TEST_CASE("suite: a malformed search.json is an error naming the file and the field") {
  suite::ojson j = toy_search();
  j["bogus"] = 1;
  fails_with(j, "bogus: unknown key 'bogus'");
  j = toy_search();
  j["families"][1]["mech"] = "warp";
  fails_with(j, "families[1].mech: \"warp\" is not a mechanism");
  j = toy_search();
  j["families"][0]["knobs"][1] = "chunk_elems";
  fails_with(j, "families[0].knobs[1]: chunk_elems does not apply to a reg family");
  j = toy_search();
  j["families"][0]["cost"] = {{"work", "z_bytes // 16"}};
  fails_with(j, "families[0].cost.work: \"z_bytes // 16\" uses unknown name 'z_bytes'");
  j = toy_search();
  j["families"][0]["cost"] = {{"wrok", "1"}};
  fails_with(j, "families[0].cost.wrok: unknown key");
  j = toy_search();
  j["families"][1]["algo"] = "fast";
  fails_with(j, "families[1]: a second family reg/fast");
  j = toy_search();
  j["families"][2]["source"] = "solution_host.cu";
  fails_with(j, "families[2].source: a host family's source is C++");
  j = toy_search();
  j["families"][0]["source"] = "missing.cu";
  fails_with(j, "families[0].source: cannot read");
  j = toy_search();
  j["families"][0]["macros"] = {{"KF_MECH", "reg"}};
  fails_with(j, "families[0].macros.KF_MECH: solution.cu has no \"#ifndef KF_MECH");
  j = toy_search();
  j["families"][1]["mech"] = "ce";
  j["families"][1]["knobs"] = suite::ojson::array();
  fails_with(j, "families[1]: a ce family needs cost.msg_bytes");
  j = toy_search();
  j["cost"].erase("work");
  fails_with(j, "families[0]: a reg family needs cost.work");
  j = toy_search();
  j["families"][0]["fallback"] = {{"when", "1"}, {"mech", "reg"}};
  fails_with(j, "families[0].fallback.mech: a fallback is another device mechanism");
}

TEST_CASE("suite: search.json's defaults must be the sources' #defines") {
  suite::ojson j = toy_search();
  j["defaults"]["blocks"] = 64;
  fails_with(j, "defaults.blocks: is 64 but solution.cu defines KF_BLOCKS 32; make them equal");
  j = toy_search();
  j["defaults"].erase("threads");
  fails_with(j, "defaults: missing threads");
  j = toy_search();
  j["defaults"]["chunk_bytes"] = 4096;
  fails_with(j, "defaults.chunk_bytes: no family's source defines KF_CHUNK_BYTES");
  j = toy_search();
  j["families"][1]["knobs"] = {"blocks", "threads"};
  j["families"][0]["knobs"] = {"blocks"};
  j["families"].erase(2);  // solution_host.cpp's chunk default is now no family's
  fails_with(j, "defaults.chunk_elems: no family's source defines KF_CHUNK_ELEMS");
}

TEST_CASE("suite: search.json's advice and dry run") {
  suite::ojson j = toy_search();
  j["advice"]["text"] = "moves {nope}";
  fails_with(j, "advice.text: {nope} has no entry in advice.values");
  j = toy_search();
  j["advice"]["text"] = "moves {slow} and a } alone";
  fails_with(j, "advice.text: a '}' at offset");
  j = toy_search();
  j["advice"]["text"] = "moves {slow}";
  fails_with(j, "advice.values.verdict: the text has no {verdict}");
  j = toy_search();
  j["advice"]["values"]["verdict"] = {{"if", "world"}, {"then", "a"}};
  fails_with(j, "advice.values.verdict: missing required key 'else'");
  j = toy_search();
  j["families"][0]["cost"] = {{"hops", "3 / (world - 1)"}};  // world 1: division by zero
  fails_with(j, "families[0]: cost.hops \"3 / (world - 1)\": ");
  j = toy_search();
  j["families"][0]["cost"] = {{"hbm_bytes", "x_bytes - 2 * y_bytes"}};
  fails_with(j, "must be non-negative");
}

TEST_CASE("suite: a search.json that is not valid JSON names the line, or the duplicate key") {
  suite::test::TempDir tmp;
  const std::string dir = toy(tmp, toy_search());
  write_file(dir + "/search.json", "{\n  \"defaults\": {\"blocks\": 32,}\n}\n");
  suite::Problem p;
  std::string err;
  CHECK_FALSE(suite::load_problem(dir, &p, &err));
  CHECK(err.find(dir + "/search.json:2:") == 0);
  write_file(dir + "/search.json",
             "{\"advice\": {\"text\": \"a\"}, \"advice\": {\"text\": \"b\"}}");
  CHECK_FALSE(suite::load_problem(dir, &p, &err));
  CHECK(err.find("the key 'advice' appears twice") != std::string::npos);
  std::filesystem::remove(dir + "/search.json");  // optional: no templates, no advice
  REQUIRE_MESSAGE(suite::load_problem(dir, &p, &err), err);
  CHECK(p.search.file.empty());
  CHECK(suite::template_space(p, inst_of(p, 2), sandbox::Backend::cuda).empty());
}

// all_reduce's advice writes vLLM's rule as an expression; it must pick what the
// primitives' kf::allreduce_one_shot picks (the rule the expert kernel runs).
TEST_CASE("suite: all_reduce's advice picks as kf::allreduce_one_shot does") {
  suite::Problem p;
  std::string err;
  REQUIRE_MESSAGE(suite::load_problem(KF_SOURCE_ROOT "/problems/all_reduce", &p, &err), err);
  for (int world : {1, 2, 3, 4, 5, 8, 9, 16})
    for (int64_t n : {1, 65535, 65536, 131071, 131072, 1 << 20}) {
      const suite::Instance inst = inst_of(p, world, {"n=" + std::to_string(n)});
      std::string text;
      REQUIRE(suite::render_advice(
          p.search, inst, [](double) { return std::string(); }, &text, &err));
      const bool one = kf::allreduce_one_shot(static_cast<size_t>(n * 4), world);
      INFO("world " << world << " n " << n);
      CHECK(text.find(one ? "picks one-shot" : "picks two-shot") != std::string::npos);
    }
}

TEST_CASE("suite: a knob search.json declares is searched like the built-in ones") {
  suite::test::TempDir tmp;
  suite::ojson j = toy_search();
  j["knobs"] = suite::ojson::parse(
      R"({"unroll": {"doc": "loads in flight per thread", "macro": "KF_UNROLL", "values": [1, 4]}})");
  j["families"][1]["knobs"].push_back("unroll");  // slow: blocks x unroll
  const std::string dir = toy(tmp, j);
  write_file(dir + "/solution.cu",
             std::string(kSolution) + "#ifndef KF_UNROLL\n#define KF_UNROLL 2\n#endif\n");
  suite::Problem p;
  std::string err;
  REQUIRE_MESSAGE(suite::load_problem(dir, &p, &err), err);
  REQUIRE(p.search.declared.size() == 1);
  CHECK(p.search.declared[0].macro == "KF_UNROLL");
  auto space = suite::template_space(p, inst_of(p, 4), sandbox::Backend::cuda);
  CHECK(space.size() == 5 * 2 + 5 * 2);  // fast unchanged; slow: 5 blocks x 2 unrolls
  CHECK(space.back().name() == "reg/slow blocks=128 unroll=4");
  CHECK(space.back().macros.back() == std::pair<std::string, std::string>{"KF_UNROLL", "4"});
  std::string text;
  REQUIRE_MESSAGE(suite::instantiate_file(p, space.back(), &text, &err), err);
  CHECK(text.find("#define KF_UNROLL 4\n") != std::string::npos);
  // The fast family does not list it: none of its templates sets it.
  CHECK(space.front().declared.empty());
}

TEST_CASE("suite: a declared knob is checked like the built-in ones") {
  suite::ojson j = toy_search();
  j["knobs"] = suite::ojson::parse(R"({"unroll": {"macro": "KF_UNROLL", "values": [1, 4]}})");
  j["families"][1]["knobs"].push_back("unroll");
  // The toy's solution.cu does not read KF_UNROLL.
  fails_with(j, "families[1].knobs: solution.cu does not read KF_UNROLL (knob unroll)");
  j["families"][1]["knobs"].back() = "unrol";
  fails_with(j, "families[1].knobs[1]: not a knob; the knobs are blocks");
  fails_with(j, "and this file's own, unroll");
  j["knobs"]["unroll"]["values"] = suite::ojson::array();
  fails_with(j, "knobs.unroll.values: expected a list of 1 to 16 values");
  j["knobs"] = suite::ojson::parse(R"({"blocks": {"macro": "KF_B", "values": [1]}})");
  fails_with(j, "knobs.blocks: is a built-in knob");
  j["knobs"] = suite::ojson::parse(R"({"n": {"macro": "KF_N", "values": [1]}})");
  fails_with(j, "knobs.n: is also a name of problem.json");
}

TEST_CASE("suite: a host-only search.json needs no GPU grid, a reg family still does") {
  // A new problem's first expert is often its host twin: no KF_BLOCKS or KF_THREADS there.
  suite::ojson s = suite::ojson::parse(R"({
  "defaults": {"chunk_elems": 65536},
  "cost": {"work": "x_bytes // 16"},
  "families": [
    {"source": "solution_host.cpp", "mech": "host", "algo": "pull", "knobs": ["chunk_elems"]},
    {"source": "solution_host.cpp", "mech": "host", "algo": "push", "knobs": ["chunk_elems"]}
  ]
})");
  suite::test::TempDir tmp;
  suite::Problem p;
  std::string err;
  REQUIRE_MESSAGE(suite::load_problem(toy(tmp, s), &p, &err), err);
  const suite::Instance inst = inst_of(p, 2);
  CHECK(suite::template_space(p, inst, sandbox::Backend::cuda).empty());
  auto host = suite::template_space(p, inst, sandbox::Backend::host);
  REQUIRE(!host.empty());
  const suite::Machine m = suite::default_h200();
  for (const suite::Template& t : host) {
    const suite::Prediction pr = suite::predict(t, inst, m);
    CHECK_MESSAGE(pr.error.empty(), t.name(), ": ", pr.error);
    CHECK(pr.ms > 0);
  }
  CHECK(suite::predict(host.back(), inst, m).hops == 1);  // push is posted, pull a round trip
  CHECK(suite::predict(host.front(), inst, m).hops == 2);

  s["families"].push_back(suite::ojson::parse(
      R"({"source": "solution.cu", "mech": "reg", "algo": "fast", "macros": {"KF_ALGO": "fast"}})"));
  fails_with(s, "missing blocks: the cost model needs the sources' default for a reg family");
}
