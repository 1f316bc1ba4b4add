// suite/problem.cpp: a problem folder -> suite::Problem (problem.json through
// problem_loader.h, then search.json), every folder of a root, and the default problem.
#include "suite/problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "sandbox/job.h"
#include "suite/instance.h"
#include "suite/problem_loader.h"
#include "suite/spec_json.h"

namespace suite {

const char* const kCategories[6] = {"collective",      "tensor-parallel", "sequence-parallel",
                                    "expert-parallel", "data-parallel",   "other"};

const ParamSpec* Problem::find_param(const std::string& name) const {
  for (const ParamSpec& s : params)
    if (s.name == name) return &s;
  return nullptr;
}

const SizeSpec* Problem::find_size(const std::string& name) const {
  for (const SizeSpec& s : sizes)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> Problem::size_names() const {
  std::vector<std::string> v;
  for (const SizeSpec& s : sizes) v.push_back(s.name);
  return v;
}

std::set<std::string> Problem::names(bool cost) const {
  std::set<std::string> known = {"world"};
  for (const ParamSpec& ps : params)
    if (ps.numeric()) known.insert(ps.name);
  if (const ParamSpec* d = find_param("dtype"); d && d->type == ParamType::dtype)
    known.insert("dsize");
  if (cost)
    for (const TensorSpec& t : tensors) known.insert({t.name + "_numel", t.name + "_bytes"});
  return known;
}

namespace fs = std::filesystem;

bool load_problem(const std::string& dir, Problem* out, std::string* err) {
  Problem p;
  p.dir = dir;
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  p.file = d + "/problem.json";
  if (!std::ifstream(p.file)) {
    *err = p.file + ": cannot open; a problem folder needs a problem.json (see problems/README.md)";
    return false;
  }
  ojson j;
  if (!read_spec_json(p.file, &j, err)) return false;
  ProblemLoader loader(&p, err);
  if (!loader.load(j)) return false;
  SearchSpec search;
  if (!load_search(p, &search, err)) return false;
  p.search = std::move(search);
  for (const char* f : {"baseline.cu", "oracle.cpp"})
    if (!fs::exists(fs::path(d) / f)) {
      *err = fmt::format(
          "{}: the problem folder has no {}; write it beside problem.json (see "
          "problems/README.md)",
          p.file, f);
      return false;
    }
  *out = std::move(p);
  return true;
}

bool load_all_problems(const std::string& problems_root, std::vector<Problem>* out,
                       std::string* err) {
  std::error_code ec;
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(problems_root, ec))
    if (e.is_directory() && fs::exists(e.path() / "problem.json"))
      dirs.push_back(e.path().string());
  if (ec) {
    *err = problems_root + ": cannot list: " + ec.message();
    return false;
  }
  std::sort(dirs.begin(), dirs.end());
  out->clear();
  std::vector<std::string> errors;
  for (const std::string& d : dirs) {
    Problem p;
    std::string e;
    if (load_problem(d, &p, &e))
      out->push_back(std::move(p));
    else
      errors.push_back(e);
  }
  std::sort(out->begin(), out->end(),
            [](const Problem& a, const Problem& b) { return a.name < b.name; });
  if (!errors.empty()) {
    *err = join(errors, "\n");
    return false;
  }
  return true;
}

bool default_problem(const std::string& problems_root, std::string* name, std::string* err) {
  std::vector<Problem> ps;
  std::string load_err;
  load_all_problems(problems_root, &ps, &load_err);  // the valid ones, whatever the rest
  if (ps.empty()) {
    *err = fmt::format("no problem under {} loads{}{}", problems_root,
                       load_err.empty() ? "" : ":\n", load_err);
    return false;
  }
  std::vector<std::string> flagged;
  for (const Problem& p : ps)
    if (p.is_default) flagged.push_back(p.file);
  if (flagged.size() > 1) {
    *err = fmt::format("{} all say \"default\": true; keep it in one", join(flagged));
    return false;
  }
  *name = ps.front().name;  // sorted by name
  for (const Problem& p : ps)
    if (p.is_default) *name = p.name;
  return true;
}

}  // namespace suite
