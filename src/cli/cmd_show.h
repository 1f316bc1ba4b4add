// cli/cmd_show.h: `kforge show FILE`: a trajectory, readably: the header, each turn's
// prompt (new messages, truncated), reply, candidate and verdict, and the totals.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "trace/trace.h"

namespace cli {

struct ShowArgs {
  std::string file;
  bool full = false;  // do not truncate prompts and replies
};

// The text `kforge show` prints for t (also the trajectories in `kforge report`); `warn`:
// read_trajectory's warning, if any.
std::string show_text(const trace::Trajectory& t, bool full, const std::string& warn);

CLI::App* add_show_command(CLI::App& app, ShowArgs* a);
int cmd_show(const ShowArgs& a);

}  // namespace cli
