// src/cli/cmd_problems.cpp: `kforge problems`, the native problems as a table.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "suite/expr.h"
#include "suite/paths.h"
#include "suite/problem.h"

namespace cli {

namespace {
std::string value_text(const suite::Value& v) {
  return v.is_string ? v.str : suite::format_number(v.num);
}

// "n=1048576 dtype=fp32" for a size.
std::string size_text(const suite::Problem& p, const std::string& name) {
  const suite::SizeSpec* s = p.find_size(name);
  std::string out;
  if (!s) return out;
  for (auto& [k, v] : s->set) out += (out.empty() ? "" : " ") + k + "=" + value_text(v);
  return out;
}

std::string dtypes_text(const suite::Problem& p) {
  const suite::ParamSpec* d = p.find_param("dtype");
  if (!d) {
    std::string out;
    for (auto& t : p.tensors)
      if (out.find(t.dtype) == std::string::npos) out += (out.empty() ? "" : ",") + t.dtype;
    return out;
  }
  if (d->choices.empty()) return value_text(d->def);
  std::string out;
  for (auto& c : d->choices) out += (out.empty() ? "" : ",") + value_text(c);
  return out;
}
}  // namespace

int cmd_problems(const ProblemsArgs& a) {
  if (!a.suite.empty()) return cmd_pkb_problems(a);
  suite::Paths paths = suite::default_paths();
  std::vector<suite::Problem> problems;
  std::string err;
  bool ok = suite::load_all_problems(paths.problems_dir, &problems, &err);
  if (a.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (auto& p : problems) {
      nlohmann::json j = {{"name", p.name},
                          {"category", p.category},
                          {"dir", p.dir},
                          {"world_min", p.world_min},
                          {"world_max", p.world_max},
                          {"dtypes", dtypes_text(p)},
                          {"small", size_text(p, "small")},
                          {"full", size_text(p, "full")}};
      if (!p.mirrors.suite.empty())
        j["mirrors"] = {{"suite", p.mirrors.suite}, {"id", p.mirrors.id}, {"name", p.mirrors.name}};
      arr.push_back(j);
    }
    std::puts(arr.dump(2).c_str());
  } else {
    // The name and category columns as wide as their longest entry, so the columns stay
    // aligned whatever the suite holds.
    size_t wn = 16, wc = 11;
    for (auto& p : problems) wn = std::max(wn, p.name.size()), wc = std::max(wc, p.category.size());
    fmt::print("{:<{}} {:<{}} {:<8} {:<10} {:<7} {}\n", "PROBLEM", wn, "CATEGORY", wc, "PKB",
               "DTYPES", "WORLD", "FULL SIZE");
    for (auto& p : problems) {
      std::string pkb = p.mirrors.suite.empty() ? "-" : fmt::format("#{}", p.mirrors.id);
      fmt::print("{:<{}} {:<{}} {:<8} {:<10} {:<7} {}\n", p.name, wn, p.category, wc, pkb,
                 dtypes_text(p), fmt::format("{}-{}", p.world_min, p.world_max),
                 size_text(p, "full"));
    }
    if (problems.empty()) fmt::print(stderr, "no problems found in {}\n", paths.problems_dir);
  }
  if (!ok) {
    fmt::print(stderr, "kforge problems: some problems are invalid:\n{}\n", err);
    return kBadInput;
  }
  return kOk;
}

}  // namespace cli
