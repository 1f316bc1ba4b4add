// cli/solve_text.h: what `kforge solve` says to a person at the start and the end of a
// run: the header (what runs where, against which target and budgets, into which
// folder) and the closing lines (what happened, where the kernel is, what to do next);
// and, without a live screen, each event as a line.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/loop.h"
#include "cli/live.h"

namespace cli {

// The header's title ("kforge solve · PROBLEM · 2 ranks · host backend") and rows.
HeaderRows solve_header(const agent::SolveConfig& cfg, const std::string& model, bool confirm,
                        const std::string& run_dir, std::string* title);

// Where the run's kernels went (report() in cmd_solve.cpp writes them).
struct KeptKernels {
  std::string best, accepted, trajectory;
};

// The closing lines: the first says what happened ("Done: ..." / "Stopped: ..."), the
// rest where things are and what to do next.
std::vector<std::string> solve_end_lines(const agent::SolveConfig& cfg, const agent::SolveResult& r,
                                         const KeptKernels& k);

// One JSON object on one line of stdout, flushed (--headless's output).
void print_json_line(const nlohmann::json& j);

// --headless: one JSON object per event; without a terminal and without --headless: the
// same events as readable lines. Never waits on a person: between turns is always "next".
class LineObserver : public agent::Observer {
 public:
  LineObserver(bool json, std::string model) : json_(json), model_(std::move(model)) {}
  void on_event(const agent::TurnEvent& ev) override;

 private:
  bool json_;
  std::string model_;
};

}  // namespace cli
