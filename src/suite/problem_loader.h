// suite/problem_loader.h: the reader behind load_problem (problem.h): problem.json's
// fields into a suite::Problem, one method per part of the file, each error naming the
// file and the field. Internal to src/suite; split in two files by part of the spec
// (problem_loader.cpp: names, parameters, world, sizes, tolerances;
// problem_loader_tensors.cpp: tensors, expressions, the dry run).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "suite/problem.h"
#include "suite/spec_json.h"

namespace suite {

class ProblemLoader : public SpecReader {
 public:
  ProblemLoader(Problem* p, std::string* err) : SpecReader(p->file, err), p_(p), err_(err) {}

  bool load(const ojson& j) {
    return top(j) && params(j) && world(j) && tensors(j) && sizes(j) && tolerance(j) && exprs(j) &&
           output_tolerances() && dry_run();
  }

 private:
  bool names_known(const Expr& e, const std::string& path, const std::set<std::string>& known,
                   const char* where);

  bool top(const ojson& j);

  // A value for parameter `ps` (a default, a choice or a size's setting).
  bool value_for(const ParamSpec& ps, const ojson& v, const std::string& path, Value* out);

  bool in_choices(const ParamSpec& ps, const Value& v, const std::string& path);

  bool params(const ojson& j);

  bool world(const ojson& j);

  bool tensors(const ojson& j);

  bool init(const ojson& v, const std::string& path, TensorSpec* s);

  bool sizes(const ojson& j);

  bool tolerance(const ojson& j);

  // Constraints, cost, busbw and workspace_bytes; then the names every expression uses.
  bool exprs(const ojson& j);

  // Every dtype an output can take needs a tolerance, whatever a user overrides.
  bool output_tolerances();

  // Resolves small and full at the smallest worlds the constraints allow, so that a shape
  // that is not an integer or a cost that divides by zero shows up now, not in a run.
  bool dry_run();

  Problem* p_;
  std::string* err_;
};

// Short names for spec_json.h's path helpers, as the loader uses them everywhere.
inline std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  return spec_join(v, sep);
}
inline std::string sub(const std::string& path, const std::string& key) {
  return spec_sub(path, key);
}
inline std::string idx(const std::string& path, size_t i) {
  return spec_idx(path, i);
}
inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace suite
