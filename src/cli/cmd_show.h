// cli/cmd_show.h: `kforge show FILE`: a trajectory, readably: the header, each turn's
// prompt (new messages, truncated), reply, candidate and verdict, and the totals.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace cli {

struct ShowArgs {
  std::string file;
  bool full = false;  // do not truncate prompts and replies
};

CLI::App* add_show_command(CLI::App& app, ShowArgs* a);
int cmd_show(const ShowArgs& a);

}  // namespace cli
