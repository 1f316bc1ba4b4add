// cli/cmd_solve.h: `kforge solve PROBLEM`: the agent loop on one problem. On a terminal a
// live view with a menu between turns; `--headless` (or a non-terminal) prints one line
// per event (JSON with --headless), writes <out>/best.cu|.cpp and <out>/verdict.json.
// Exit codes: 0 the target was met; 1 the run ended without meeting it (a budget, quit,
// accept, three format errors in a row); 2 bad input (a missing API key and a malformed
// --base-url included); 3 kforge or the model provider failed (the JSON result line and
// stderr say which); 128+N a signal N stopped it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP),
// after the summary and the result line were written.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/loop.h"
#include "cli/eval_options.h"

namespace cli {

struct SolveArgs {
  std::vector<std::string> positionals;  // PROBLEM, then PARAM=V
  EvalOptions opt;
  std::string model, base_url, config_file;
  std::string api_key_env;  // "" the config's or the provider's; "none": send no key
  agent::Mode mode = agent::Mode::direct;
  double target = 1.0;
  int max_turns = 10;
  int64_t max_tokens = 0;
  double max_cost = 0, max_wall = 0;
  bool headless = false;
  bool confirm = false;  // agent mode: each command waits for the person
  std::string out, topology_file;
  double idle_timeout_s = 0;  // 0: the provider's configured idle time-out
  double command_timeout_s = 120;
  int reply_max_tokens = 0;
  int64_t llm_seed = -1;  // >= 0: the model's sampling seed (kforge sweep: the sample's index)
  agent::ProfileMode profile = agent::ProfileMode::never;
  // --resume RUN (a run's folder or trajectory) or --continue (the newest run of the
  // problem): go on with that run (cli/solve_resume.h).
  std::string resume;
  bool continue_run = false;
  // The parsed `solve` command these came from: which options were given, for the
  // trajectory's header and a resume (null where no command line made them).
  const CLI::App* cli = nullptr;
};

// Adds the `solve` subcommand to app.
CLI::App* add_solve_command(CLI::App& app, SolveArgs* a);
int cmd_solve(const SolveArgs& a);

// --suite pkb:PATH (cmd_pkb.cpp): cfg's foreign suite for the one PKB problem a names,
// its prompts folder and world. Needs cfg->topology. False with a message naming the bad
// input (the checkout, the problem, --mode agent).
bool setup_pkb_solve(const SolveArgs& a, agent::SolveConfig* cfg, std::string* err);

}  // namespace cli
