// sandbox/build.h: one source file to one shared library (DESIGN.md "The sandbox",
// step 1): static check, compile with a time limit, symbol check. Libraries are cached
// under <cache_dir>/<key>/lib.so, the key a SHA-256 of the source, the role, the flags,
// the compiler's version and the headers it may include; several processes may build
// into one cache at once (each compiles under its own temporary names, then renames).
#pragma once

#include <string>
#include <vector>

#include "static_check.h"
#include "verdict_status.h"

namespace sandbox {

struct Toolchain {
  Backend backend = Backend::cuda;
  std::string nvcc = "/usr/local/cuda/bin/nvcc";
  std::string cxx = "g++";
  std::string include_dir;  // primitives/include
  std::string cache_dir;
  std::string nccl_include, nccl_lib_dir;  // baselines on cuda
  double limit_s = 180;
  std::string arch = "sm_90";
  bool allow_multicast = multicast_allowed_by_env();
};

struct BuildResult {
  bool ok = false;
  // When !ok: which stage failed and the verdict it means.
  std::string stage;                 // "static" | "compile" | "symbols" | "load"
  Status status = Status::rejected;  // rejected | compile_error | load_error
  std::vector<Finding> findings;     // static and symbol findings
  std::string log;                   // the compiler's output, trimmed (compile errors)
  std::string lib_path;              // <cache_dir>/<key>/lib.so when ok
  std::string key;
  bool cached = false;    // the library was already in the cache
  std::string command;    // the compile command, for the record
  std::string file_name;  // the source's own name, as messages use it
  double static_s = 0, compile_s = 0, symbols_s = 0;
  // One line: "rejected: kernel.cu:12: uses MPI_Allreduce: ..." or "compile_error: ...".
  std::string summary() const;
};

// False (with *err) only for internal failures: the source cannot be read, the cache
// cannot be written, the compiler cannot be started. A bad source is *out with !ok.
// A kernel's library exports kf_run; an oracle's (sandbox/oracle.h) kf_oracle_v1, and is
// built with g++ whatever the backend, without the kernels' static rules.
enum class LibraryKind { kernel, oracle };
bool build_library(const Toolchain& tc, const std::string& source_path, Role role, BuildResult* out,
                   std::string* err, LibraryKind kind = LibraryKind::kernel);

// <problem_dir>/oracle.cpp: where a problem's oracle lives.
std::string oracle_source(const std::string& problem_dir);

// Builds the oracle of the problem in `problem_dir` with tc's g++ (whatever tc.backend),
// confined and cached like a candidate. False with *err, which names the file and says
// what to do, when it does not build or the build could not run.
bool build_oracle(const Toolchain& tc, const std::string& problem_dir, BuildResult* out,
                  std::string* err);

// The compile flags (without the source and the output), as the key sees them.
std::vector<std::string> compile_flags(const Toolchain& tc, const std::string& source, Role role);

// Keeps what matters of a compiler's output: the first errors with their file:line and
// context, at most max_lines lines, with a note of how many were cut. `tmp_path` (the
// file actually compiled) is replaced by `file_name` throughout.
std::string trim_compiler_log(const std::string& log, const std::string& tmp_path,
                              const std::string& file_name, size_t max_lines = 60);

}  // namespace sandbox
