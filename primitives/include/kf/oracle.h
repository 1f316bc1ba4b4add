// kf/oracle.h: the CPU reference of a problem, in double precision, and the small C ABI
// through which kforge-rank calls it.
//
// problems/<name>/oracle.cpp defines one with KF_ORACLE(<name>) { ... }. kforge builds that
// file with g++ into a shared library the first time the problem is used (cached like a
// candidate's, sandbox/build.h) and kforge-rank loads it: adding a problem is adding a
// folder, with no rebuild of kforge. The oracle computes the expected outputs of one rank
// (io.rank) from the inputs of every rank, which the caller rebuilds from the counter-based
// generator (sandbox/inputs.h) without talking to the other ranks. Values are doubles
// decoded from the tensor's dtype; the oracle fills the output arrays, which arrive sized to
// this rank's output shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

extern "C" {
// The library's one entry point is a C function over plain pointers and callbacks, so that
// an oracle built by the person's g++ and kforge built by another compiler (or standard
// library) need not agree on how a std::map or a std::function is laid out.
struct kf_oracle_io {
  int world;
  int rank;
  int n_params;
  const char* const* param_names;
  const double* param_values;
  int n_str_params;
  const char* const* str_param_names;
  const char* const* str_param_values;
  void* host;  // the caller's state, passed back to each callback
  // Each returns the data with its element count in *n, or sets *err (owned by the host,
  // valid until the next callback) for a name or rank the job does not have.
  const double* (*input)(void* host, const char* name, int rank, size_t* n, const char** err);
  const int64_t* (*shape)(void* host, const char* name, int rank, size_t* n, const char** err);
  double* (*out)(void* host, const char* name, size_t* n, const char** err);
};
// 1: the outputs are filled; 0: a message in err (NUL-terminated, at most err_len bytes).
typedef int (*kf_oracle_fn)(const struct kf_oracle_io* io, char* err, size_t err_len);
}

#define KF_ORACLE_SYMBOL "kf_oracle_v1"

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

}  // namespace sandbox

namespace kf_oracle_detail {

// Inside the oracle's library: the C view as an OracleIO. Inputs and shapes are copied in
// on first use; outputs are copied back only when the oracle succeeds.
inline int call_from_c(sandbox::OracleFn fn, const kf_oracle_io* c, char* err, size_t err_len) {
  std::string why;
  bool ok = false;
  try {
    sandbox::OracleIO io;
    io.world = c->world;
    io.rank = c->rank;
    for (int i = 0; i < c->n_params; ++i) io.params[c->param_names[i]] = c->param_values[i];
    for (int i = 0; i < c->n_str_params; ++i)
      io.str_params[c->str_param_names[i]] = c->str_param_values[i];
    std::map<std::pair<std::string, int>, std::vector<double>> inputs;
    std::map<std::pair<std::string, int>, std::vector<int64_t>> shapes;
    std::map<std::string, std::pair<double*, std::vector<double>>> outs;
    io.input = [&](const std::string& name, int r) -> const std::vector<double>& {
      auto it = inputs.find({name, r});
      if (it != inputs.end()) return it->second;
      size_t n = 0;
      const char* e = nullptr;
      const double* p = c->input(c->host, name.c_str(), r, &n, &e);
      if (e) throw std::runtime_error(e);
      return inputs[{name, r}] = std::vector<double>(p, p + n);
    };
    io.shape = [&](const std::string& name, int r) -> const std::vector<int64_t>& {
      auto it = shapes.find({name, r});
      if (it != shapes.end()) return it->second;
      size_t n = 0;
      const char* e = nullptr;
      const int64_t* p = c->shape(c->host, name.c_str(), r, &n, &e);
      if (e) throw std::runtime_error(e);
      return shapes[{name, r}] = std::vector<int64_t>(p, p + n);
    };
    io.out = [&](const std::string& name) -> std::vector<double>& {
      auto it = outs.find(name);
      if (it != outs.end()) return it->second.second;
      size_t n = 0;
      const char* e = nullptr;
      double* p = c->out(c->host, name.c_str(), &n, &e);
      if (e) throw std::runtime_error(e);
      auto& slot = outs[name];
      slot = {p, std::vector<double>(p, p + n)};  // the host's poison (NaN) comes along
      return slot.second;
    };
    ok = fn(io, &why);
    if (ok)
      for (auto& [name, o] : outs)
        for (size_t i = 0; i < o.second.size(); ++i) o.first[i] = o.second[i];
  } catch (const std::exception& e) {
    why = e.what();
    ok = false;
  }
  if (!ok && err && err_len > 0) std::snprintf(err, err_len, "%s", why.c_str());
  return ok ? 1 : 0;
}

}  // namespace kf_oracle_detail

// The problem's name in KF_ORACLE names the C++ function only: the folder is the problem,
// so a copied folder's oracle works unchanged under its new name.
#define KF_ORACLE(problem)                                                                    \
  static bool kf_oracle_##problem(const sandbox::OracleIO& io, std::string* err);             \
  extern "C" __attribute__((visibility("default"))) int kf_oracle_v1(const kf_oracle_io* io,  \
                                                                     char* err, size_t len) { \
    return kf_oracle_detail::call_from_c(kf_oracle_##problem, io, err, len);                  \
  }                                                                                           \
  static bool kf_oracle_##problem(const sandbox::OracleIO& io, [[maybe_unused]] std::string* err)
