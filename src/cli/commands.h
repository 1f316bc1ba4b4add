// src/cli/commands.h: the subcommands. Each returns the process exit code:
//   0 success (for eval: the kernel is correct), 1 the kernel is not correct,
//   2 bad input (flag, problem file, kernel path), 3 kforge itself failed.
#pragma once

#include <string>
#include <vector>

namespace cli {

enum ExitCode { kOk = 0, kNotCorrect = 1, kBadInput = 2, kInternal = 3 };

struct ProblemsArgs {
  bool json = false;
};
int cmd_problems(const ProblemsArgs& a);

struct EvalArgs {
  std::string problem;
  std::string kernel;                  // empty: the problem's shipped example
  std::vector<std::string> overrides;  // PARAM=V
  std::vector<std::string> sizes;      // small, full (default: both, in that order)
  int world = 1;
  bool json = false;
  bool compile_only = false;
  bool no_time = false;
  std::string backend;  // cuda | host | "" (detect)
  int iters = 0;        // 0: the default
  std::string timing;   // --timing: isolated (default) or batched
  int warmup = -1;
  int trials = 0;
  uint64_t seed = 42;
  double call_limit_s = 0;  // 0: the default
  std::string machine_file;
  bool is_baseline = false;  // `kforge baseline`: evaluate the problem's baseline itself
};
int cmd_eval(const EvalArgs& a);

}  // namespace cli
