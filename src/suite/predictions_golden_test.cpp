// suite/predictions_golden_test.cpp: every template's prediction and the analysis text,
// at a grid of instances, against src/suite/testdata/predictions.golden. The file was
// recorded before the cost model's per-problem terms moved from C++ into each problem's
// folder, so it pins that the move changed no number and no word of the prompt. A change
// to the model that is meant to change them rewrites it: KF_UPDATE_GOLDEN=1 kforge_tests
// -tc="*golden*", then review the diff.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "kf_build_paths.h"
#include "suite/analysis.h"
#include "suite/shipped_test_util.h"

using suite::test::shipped_problem;

namespace {

const char* const kGolden = KF_SOURCE_ROOT "/src/suite/testdata/predictions.golden";

// A section's header: "== predict PROBLEM SIZE WORLD BACKEND [PARAM=V ...]" or
// "== analysis PROBLEM SIZE WORLD [PARAM=V ...]".
struct Header {
  std::string kind, problem, size, backend;
  int world = 0;
  std::vector<std::string> over;
  std::string text() const {
    std::string s = fmt::format("== {} {} {} {}", kind, problem, size, world);
    if (kind == "predict") s += " " + backend;
    for (const std::string& o : over) s += " " + o;
    return s;
  }
};

bool parse_header(const std::string& line, Header* h) {
  std::istringstream in(line);
  std::string eq;
  in >> eq >> h->kind >> h->problem >> h->size >> h->world;
  if (eq != "==" || in.fail()) return false;
  if (h->kind == "predict") in >> h->backend;
  for (std::string o; in >> o;) h->over.push_back(o);
  return h->kind == "analysis" || !h->backend.empty();
}

std::string section(const suite::Problem& p, const Header& h) {
  suite::Instance inst;
  std::string err;
  if (!suite::resolve_instance(p, h.world, h.size, h.over, &inst, &err)) return err + "\n";
  const suite::Machine m = suite::default_h200();
  if (h.kind == "analysis") return suite::analysis_text(p, inst, m);
  std::string o;
  sandbox::Backend backend = sandbox::Backend::cuda;
  REQUIRE(sandbox::parse_enum(h.backend, &backend));
  for (const suite::Template& t : suite::template_space(p, inst, backend)) {
    const suite::Prediction r = suite::predict(t, inst, m);
    // name | ms bound blocks bw_gbps comm_bytes hbm_bytes kernels barriers ce_calls hops
    o += fmt::format("{} | {:.10g} {} {} {:.10g} {:.10g} {:.10g} {} {} {} {}\n", t.name(), r.ms,
                     r.bound, r.blocks, r.bw_gbps, r.comm_bytes, r.hbm_bytes, r.kernels, r.barriers,
                     r.ce_calls, r.hops);
  }
  return o;
}

// The grid recorded: every problem at worlds 1, 2 and 8, both sizes, a large n for the
// regimes the sizes miss, and the other dtype where there is one; the analysis at a few.
std::vector<Header> grid(const std::vector<suite::Problem>& problems) {
  std::vector<Header> hs;
  for (const suite::Problem& p : problems) {
    std::vector<std::pair<const char*, std::vector<std::string>>> insts = {
        {"small", {}}, {"full", {}}, {"full", {"n=16777216"}}};
    if (const suite::ParamSpec* d = p.find_param("dtype"); d && d->choices.size() > 1)
      insts.push_back({"small", {"dtype=bf16"}}), insts.push_back({"full", {"dtype=bf16"}});
    for (int world : {1, 2, 8})
      for (const auto& [size, over] : insts) {
        hs.push_back({"predict", p.name, size, "cuda", world, over});
        if (world == 2) hs.push_back({"predict", p.name, size, "host", world, over});
      }
    for (const auto& [size, world, over] :
         std::vector<std::tuple<const char*, int, std::vector<std::string>>>{
             {"small", 2, {}},
             {"full", 8, {}},
             {"full", 8, {"n=16777216"}},
             {"full", 4, {"dtype=bf16"}}})
      if (over.empty() || p.find_param(over[0].substr(0, over[0].find('='))))
        hs.push_back({"analysis", p.name, size, "", world, over});
  }
  return hs;
}

}  // namespace

TEST_CASE("suite: every template's prediction and the analysis text equal the recorded ones") {
  if (std::getenv("KF_UPDATE_GOLDEN")) {
    std::vector<suite::Problem> ps;
    std::string err;
    REQUIRE_MESSAGE(suite::load_all_problems(KF_SOURCE_ROOT "/problems", &ps, &err), err);
    std::ofstream out(kGolden);
    for (const Header& h : grid(ps)) {
      const suite::Problem& p =
          *std::find_if(ps.begin(), ps.end(), [&](const auto& q) { return q.name == h.problem; });
      out << h.text() << "\n" << section(p, h);
    }
    MESSAGE("rewrote " << kGolden);
  }
  std::ifstream in(kGolden);
  REQUIRE_MESSAGE(in, kGolden);
  std::vector<std::pair<Header, std::string>> sections;
  for (std::string line; std::getline(in, line);) {
    Header h;
    if (line.rfind("== ", 0) == 0 && parse_header(line, &h))
      sections.push_back({h, ""});
    else if (!sections.empty())
      sections.back().second += line + "\n";
  }
  REQUIRE(sections.size() > 50);
  std::map<std::string, suite::Problem> loaded;
  for (const auto& [h, want] : sections) {
    if (!loaded.count(h.problem)) loaded[h.problem] = shipped_problem(h.problem);
    INFO(h.text());
    CHECK(section(loaded[h.problem], h) == want);
  }
}
