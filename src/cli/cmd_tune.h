// cli/cmd_tune.h: `kforge tune PROBLEM`: the builtin template search on its own (no
// conversation): propose by the cost model, evaluate each template in the sandbox, keep
// the best, print a table and write the best kernel. Exit codes: 0 a correct kernel was
// found (and written); 1 none was; 2 bad input; 3 kforge failed. --predict prints the
// cost model's analysis and ranking only (no sandbox, so CUDA templates work without a GPU).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/eval_options.h"

namespace cli {

struct TuneArgs {
  std::vector<std::string> positionals;  // PROBLEM, then PARAM=V
  EvalOptions opt;
  int budget = 8;  // templates evaluated at most
  bool json = false;
  bool predict_only = false;  // --predict: the analysis and the ranked predictions, no runs
  std::string out;            // default runs/tune/<problem>-best.cu|.cpp
};

// Adds the `tune` subcommand to app.
CLI::App* add_tune_command(CLI::App& app, TuneArgs* a);
int cmd_tune(const TuneArgs& a);

}  // namespace cli
