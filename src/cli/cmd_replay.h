// cli/cmd_replay.h: `kforge replay FILE`: re-evaluates every candidate a trajectory
// recorded, through the sandbox with the recorded configuration, and prints the recorded
// and the new verdict per turn. Exit 0 when every status matches, 1 when one differs,
// 2 for a bad file (or a cuda trajectory on a machine without a GPU), 3 when kforge failed.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace cli {

struct ReplayArgs {
  std::string file;
  bool json = false;
};

CLI::App* add_replay_command(CLI::App& app, ReplayArgs* a);
int cmd_replay(const ReplayArgs& a);

}  // namespace cli
