// cli/cmd_tune.h: `kforge tune PROBLEM`: the builtin template search on its own (no
// conversation): propose by the cost model, evaluate each template in the sandbox, keep
// the best, print a table and write the best kernel. Exit codes: 0 a correct kernel was
// found (and written); 1 none was; 2 bad input; 3 kforge failed. --predict prints the
// cost model's analysis and ranking only (no sandbox, so CUDA templates work without a GPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cli {

struct TuneArgs {
  std::vector<std::string> positionals;  // PROBLEM, then PARAM=V
  std::vector<std::string> sizes;        // small, full, or PARAM=V
  int world = 2;
  std::string backend;  // cuda | host | "" (detect)
  int budget = 8;       // templates evaluated at most
  bool json = false;
  bool predict_only = false;  // --predict: the analysis and the ranked predictions, no runs
  std::string out;      // default runs/tune/<problem>-best.cu|.cpp
  std::string machine_file;
  int iters = 0, warmup = -1, trials = 0;
  uint64_t seed = 42;
  double call_limit_s = 0;
};

// Adds the `tune` subcommand to app.
CLI::App* add_tune_command(CLI::App& app, TuneArgs* a);
int cmd_tune(const TuneArgs& a);

}  // namespace cli
