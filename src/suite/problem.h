// suite/problem.h: a native problem's spec, problems/<name>/problem.json, loaded and
// validated (the format is problems/README.md). Loading checks everything that can be
// checked without a world size: every field's type, no unknown keys (a typo must not
// pass silently), dtype and distribution names, that every expression parses and names
// only what it may, and a dry run of the `small` and `full` sizes at the smallest worlds.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sandbox/enum_names.h"
#include "suite/expr.h"
#include "suite/search.h"

namespace suite {

// A parameter value: numeric for `int` and `float`, text for `dtype` and `string`.
struct Value {
  bool is_string = false;
  double num = 0;
  std::string str;
};

// A parameter's type, as problem.json names it: int, float, dtype or string.
enum class ParamType { integer, real, dtype, string };

}  // namespace suite

namespace sandbox {
template <>
struct EnumNames<suite::ParamType> {
  static constexpr const char* what = "parameter type";
  static constexpr const char* names[] = {"int", "float", "dtype", "string"};
};
}  // namespace sandbox

namespace suite {

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::integer;
  Value def;  // dtype defaults are stored by their canonical name (fp32, bf16, ...)
  std::vector<Value> choices;  // empty: any value of the type
  std::string doc;
  bool numeric() const { return type == ParamType::integer || type == ParamType::real; }
  const char* type_name() const { return sandbox::enum_name(type); }
};

struct SizeSpec {
  std::string name;                                // small, full, ...
  std::vector<std::pair<std::string, Value>> set;  // in file order
};

struct InitDecl {
  std::string dist;  // uniform (lo, hi) | normal (mean, std) | int (lo, hi), inclusive
  Expr a, b;         // lo/mean and hi/std; a number in the file becomes a constant expression
};

struct TensorSpec {
  std::string name;
  std::string role;   // in | out
  std::string dtype;  // a canonical dtype name, or "$param" naming a dtype parameter
  std::vector<Expr> shape;
  bool has_init = false;
  InitDecl init;
  bool output() const { return role == "out"; }
};

struct Tolerance {
  double atol = 0, rtol = 0;
};

struct Mirror {
  std::string suite;  // e.g. ParallelKernelBench; empty: mirrors nothing
  int id = -1;
  std::string name;
};

struct Problem {
  std::string dir;   // the problem's folder, as given to load_problem
  std::string file;  // dir + "/problem.json": every message about the spec names it
  std::string name;
  std::string category;
  Mirror mirrors;
  std::string description;
  std::vector<ParamSpec> params;  // in file order
  std::vector<SizeSpec> sizes;    // in file order
  int world_min = 1, world_max = 1;
  std::vector<Expr> constraints;
  std::vector<TensorSpec> tensors;             // in the order the kernel sees them
  std::map<std::string, Tolerance> tolerance;  // by canonical dtype name
  Expr comm_bytes, hbm_bytes, flops;
  bool has_busbw = false;
  Expr busbw_bytes, busbw_factor;
  Expr workspace_bytes;     // empty: the default (64 MiB)
  bool is_default = false;  // "default": true: `kforge solve` without a problem solves this one
  SearchSpec search;        // search.json beside problem.json; search.file empty: none

  const ParamSpec* find_param(const std::string& name) const;
  const SizeSpec* find_size(const std::string& name) const;
  std::vector<std::string> size_names() const;
  // The names an expression may use: the numeric parameters, world and (with a dtype
  // parameter) dsize; with `cost` also <tensor>_numel and <tensor>_bytes, as cost, busbw
  // and search.json's expressions may.
  std::set<std::string> names(bool cost) const;
};

// The allowed values, for messages and for `kforge problems`.
extern const char* const kCategories[6];

// Reads and validates dir/problem.json, and dir/search.json where there is one. Every
// error names the file, the field path (e.g. tensors[1].shape[0]) and what to do.
bool load_problem(const std::string& dir, Problem* out, std::string* err);

// Loads every folder of `problems_root` that has a problem.json, sorted by name. Folders
// without one are skipped. On errors the valid problems are still returned in `out` and
// `err` lists every invalid one, one per line.
bool load_all_problems(const std::string& problems_root, std::vector<Problem>* out,
                       std::string* err);

// The problem `kforge solve` takes when given none: the one whose problem.json says
// "default": true, else the first by name. Problems that fail to load are passed over;
// false only when none loads or two claim the default.
bool default_problem(const std::string& problems_root, std::string* name, std::string* err);

}  // namespace suite
