// cli/cmd_sweep.h: `kforge sweep PROBLEMS --samples K --model M ...`: K independent
// `kforge solve` runs per problem and model into one folder, resumable (src/sweep/), here
// or, with --slurm, as a Slurm job array (cmd_sweep_slurm.cpp), and
// `kforge sweep status DIR`: pass@k, fast_p@k and the rest by model, category, problem.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/eval_options.h"

namespace cli {

struct SweepArgs {
  std::vector<std::string> problems;  // names, "all", or "category:NAME"
  std::vector<std::string> models;
  int samples = 4;
  int jobs = 1;
  std::string mode = "direct";
  std::string out;
  // solve's budget and provider flags, passed on when given
  int max_turns = 0;
  long long max_tokens = 0;
  double max_cost = 0, max_wall = 0, target = 0;
  std::string base_url, api_key_env, config_file;
  EvalOptions opt;
  // --slurm: submit the sweep as a job array (src/sweep/slurm.h) instead of running it
  bool slurm = false;
  int array_size = 0;               // 0: sweep::default_array_size
  std::vector<std::string> sbatch;  // the user's sbatch options, passed on
  // status
  std::string status_dir;
  bool json = false, csv = false;
};

struct SweepCommands {
  CLI::App* sweep = nullptr;
  CLI::App* status = nullptr;
};

SweepCommands add_sweep_command(CLI::App& app, SweepArgs* a);
int cmd_sweep(const SweepArgs& a);
int cmd_sweep_status(const SweepArgs& a);

// `kforge report DIR [--out FILE]`: the sweep as one self-contained HTML file
// (src/sweep/report.h), DIR/report.html unless --out says otherwise (cmd_report.cpp).
struct ReportArgs {
  std::string dir, out;
};
CLI::App* add_report_command(CLI::App& app, ReportArgs* a);
int cmd_report(const ReportArgs& a);

}  // namespace cli
