// src/cli/cmd_report.cpp: `kforge report DIR` (cmd_sweep.h): the sweep's HTML report,
// its trajectories rendered as `kforge show` prints them.
#include <fmt/format.h>

#include <filesystem>

#include "cli/cmd_show.h"
#include "cli/cmd_sweep.h"
#include "cli/commands.h"
#include "sweep/report.h"

namespace cli {

CLI::App* add_report_command(CLI::App& app, ReportArgs* a) {
  CLI::App* r = app.add_subcommand(
      "report", "a sweep as one self-contained HTML file: curves, speedups, failures, samples");
  r->add_option("dir", a->dir, "the sweep's folder (its --out)")->required();
  r->add_option("--out,-o", a->out, "the HTML file (default DIR/report.html)");
  return r;
}

int cmd_report(const ReportArgs& a) {
  auto render = [](const std::string& path) {
    trace::Run run;
    std::string err, warn;
    if (!trace::read_run(path, &run, &err, &warn)) return std::string();
    return render_trajectory(run, false, warn);
  };
  std::string err;
  if (!sweep::write_report(a.dir, a.out, render, &err)) {
    fmt::print(stderr, "kforge report: {}\n", err);
    // A folder that holds no sweep is the user's to fix; a report that cannot be written
    // is the machine's.
    return err.find("cannot write the report") != std::string::npos ? kInternal : kBadInput;
  }
  fmt::print("{}\n", a.out.empty() ? a.dir + "/report.html" : a.out);
  return kOk;
}

}  // namespace cli
