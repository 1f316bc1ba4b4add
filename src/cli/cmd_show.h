// cli/cmd_show.h: `kforge show FILE`: a trajectory, readably: the header, each turn's
// prompt (new messages, truncated), reply, candidate and verdict, and the totals.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "trace/run.h"

namespace cli {

struct ShowArgs {
  std::string file;
  bool full = false;  // do not truncate prompts and replies
};

CLI::App* add_show_command(CLI::App& app, ShowArgs* a);
// The text `kforge show` prints (also what a sweep's report shows of each trajectory);
// `warn` is read_run's note on an unfinished file.
std::string render_trajectory(const trace::Run& run, bool full, const std::string& warn);
int cmd_show(const ShowArgs& a);

}  // namespace cli
