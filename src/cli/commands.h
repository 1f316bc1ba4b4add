// src/cli/commands.h: the subcommands. Each returns the process exit code:
//   0 success (for eval: the kernel is correct), 1 the kernel is not correct,
//   2 bad input (flag, problem file, kernel path), 3 kforge itself failed.
#pragma once

#include <string>
#include <vector>

#include "cli/eval_options.h"
#include "pkb/evaluate.h"

namespace cli {

enum ExitCode { kOk = 0, kNotCorrect = 1, kBadInput = 2, kInternal = 3 };

struct ProblemsArgs {
  bool json = false;
  std::string suite;  // "" or pkb:PATH
};
int cmd_problems(const ProblemsArgs& a);

struct EvalArgs {
  std::string problem;
  std::string kernel;               // empty: the problem's shipped example
  std::vector<std::string> params;  // PARAM=V
  EvalOptions opt;
  bool json = false;
  bool compile_only = false;
  bool is_baseline = false;  // `kforge baseline`: evaluate the problem's baseline itself
};
int cmd_eval(const EvalArgs& a);

// --suite pkb:PATH (cmd_pkb.cpp): the problems of a ParallelKernelBench checkout, and the
// eval of one candidate (PROBLEM SOLUTION.py).
int cmd_pkb_problems(const ProblemsArgs& a);
int cmd_pkb_eval(const EvalArgs& a);

// The evaluator's options for a PKB candidate from the command line's (world, trials,
// warmup, iters, --no-time, python): what eval and solve share. False with *err naming an
// option of kforge's own problems that PKB's evaluator has no use for (--seed, --size, ...).
bool pkb_eval_options(const EvalOptions& o, pkb::EvalSpec* spec, std::string* err);

// A sweep's problems from a PKB checkout (`kforge sweep --suite pkb:PATH 1-5 16`): each
// word as select_problems takes it, in the checkout's order, without duplicates; the
// category of each is "pkb". False with a message naming the word or the checkout.
bool resolve_pkb_problems(const std::string& suite, const std::vector<std::string>& words,
                          std::vector<std::string>* names, std::vector<std::string>* cats,
                          std::string* err);

}  // namespace cli
