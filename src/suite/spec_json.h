// suite/spec_json.h: the strict JSON reading that problem.json and search.json share. A
// typo must not pass silently, so: syntax errors with line and column, a key twice in one
// object, unknown keys and missing required ones are errors, and every error names the
// file and the field path (e.g. "problems/x/search.json: families[1].mech: ...").
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "suite/expr.h"

namespace suite {

using ojson = nlohmann::ordered_json;

// Reads and parses `file`. False with *err "FILE:LINE:COL: not valid JSON: ..." or naming
// the key that appears twice in one object.
bool read_spec_json(const std::string& file, ojson* out, std::string* err);

// Field paths: sub("cost", "work") is "cost.work", idx("families", 1) is "families[1]".
std::string spec_sub(const std::string& path, const std::string& key);
std::string spec_idx(const std::string& path, size_t i);
std::string spec_join(const std::vector<std::string>& v, const char* sep = ", ");

bool is_identifier(const std::string& s);

// The checks a spec loader makes on one file; each false return has set *err to
// "FILE: PATH: MESSAGE".
class SpecReader {
 public:
  SpecReader(std::string file, std::string* err) : file_(std::move(file)), err_(err) {}

  bool fail(const std::string& path, const std::string& msg);
  // j must be an object whose keys are all in `allowed` and that has every `required`.
  bool keys(const ojson& j, const std::string& path, const std::vector<std::string>& allowed,
            const std::vector<std::string>& required);
  bool string_at(const ojson& j, const std::string& key, const std::string& path, std::string* out,
                 bool nonempty = true);
  bool number_at(const ojson& v, const std::string& path, double* out);
  bool int_at(const ojson& v, const std::string& path, int* out);
  bool int64_at(const ojson& v, const std::string& path, int64_t* out);
  // An expression field: a string in the expression language, or a plain number.
  bool expr_at(const ojson& v, const std::string& path, Expr* out);
  // Every name `e` mentions must be in `known`; `where` says which context this is and
  // `why` (optional) adds a hint about one unknown name.
  bool names_known(const Expr& e, const std::string& path, const std::set<std::string>& known,
                   const char* where,
                   const std::function<std::string(const std::string&)>& why = nullptr);

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::string* err_;
};

}  // namespace suite
