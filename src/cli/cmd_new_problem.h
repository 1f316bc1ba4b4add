// cli/cmd_new_problem.h: `kforge new-problem NAME [--from EXISTING]`: a new problem folder,
// a copy of an existing one under the new name, in the problems path (KFORGE_PROBLEMS, or
// the checkout's problems/). Nothing is rebuilt: kforge builds a problem's oracle, baseline
// and examples from its folder when first used. Exit codes: 0 made, 2 bad input, 3 failed.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace cli {

struct NewProblemArgs {
  std::string name;
  // A problem's name in the problems path, or a folder; "" takes the checkout's default
  // problem (the one whose problem.json says "default": true).
  std::string from;
};

CLI::App* add_new_problem_command(CLI::App& app, NewProblemArgs* a);
int cmd_new_problem(const NewProblemArgs& a);

}  // namespace cli
