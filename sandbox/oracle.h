// sandbox/oracle.h: the CPU reference of a problem, in double precision.
//
// problems/<name>/oracle.cpp defines one with KF_ORACLE(<name>) { ... }. It computes the
// expected outputs of one rank (io.rank) from the inputs of every rank, which the caller
// rebuilds from the counter-based generator (sandbox/inputs.h) without talking to the
// other ranks. Values are doubles decoded from the tensor's dtype; the oracle fills the
// output arrays, which arrive sized to this rank's output shapes.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sandbox {

struct OracleIO {
  int world = 1;
  int rank = 0;
  std::map<std::string, double> params;
  std::map<std::string, std::string> str_params;
  // Rank r's values of input tensor `name`, row-major.
  std::function<const std::vector<double>&(const std::string& name, int r)> input;
  // Rank r's shape of tensor `name` (inputs and outputs).
  std::function<const std::vector<int64_t>&(const std::string& name, int r)> shape;
  // This rank's expected output `name`, already sized; the oracle writes every element.
  std::function<std::vector<double>&(const std::string& name)> out;

  double param(const std::string& name, double fallback = 0) const {
    auto it = params.find(name);
    return it == params.end() ? fallback : it->second;
  }
  int64_t iparam(const std::string& name, int64_t fallback = 0) const {
    return static_cast<int64_t>(param(name, static_cast<double>(fallback)));
  }
};

// Returns false with a message in *err when the inputs break the problem's contract.
using OracleFn = bool (*)(const OracleIO& io, std::string* err);

bool register_oracle(const char* problem, OracleFn fn);
// The oracle of `problem`, or nullptr.
OracleFn find_oracle(const std::string& problem);
std::vector<std::string> oracle_names();

}  // namespace sandbox

#define KF_ORACLE(problem)                                                        \
  static bool kf_oracle_##problem(const sandbox::OracleIO& io, std::string* err); \
  [[maybe_unused]] static const bool kf_oracle_registered_##problem =             \
      sandbox::register_oracle(#problem, kf_oracle_##problem);                    \
  static bool kf_oracle_##problem(const sandbox::OracleIO& io, [[maybe_unused]] std::string* err)
