// cli/cmd_replay.cpp: see cmd_replay.h.
#include "cli/cmd_replay.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "cli/commands.h"
#include "eval/eval.h"
#include "sandbox/evaluate.h"
#include "sandbox/interrupt.h"
#include "sandbox/process.h"
#include "suite/paths.h"
#include "suite/problem.h"
#include "trace/run.h"

namespace cli {

using nlohmann::json;
namespace fs = std::filesystem;

CLI::App* add_replay_command(CLI::App& app, ReplayArgs* a) {
  CLI::App* r = app.add_subcommand(
      "replay", "re-evaluate the candidates a trajectory recorded and compare the verdicts");
  r->add_option("file", a->file, "a trajectory (runs/<problem>/*.jsonl)")->required();
  r->add_flag("--json", a->json, "one JSON line per candidate, then a summary line");
  return r;
}

namespace {

// The evaluation options a trajectory's header recorded (config.eval), as the run had them.
bool recorded_config(const json& ec, const suite::Paths& paths, eval::EvalConfig* cfg,
                     std::string* err) {
  try {
    std::string dir = paths.problems_dir + "/" + ec.at("problem").get<std::string>();
    if (!suite::load_problem(dir, &cfg->problem, err)) return false;
    cfg->paths = paths;
    if (!sandbox::settings_from_json(ec, &cfg->settings, err)) return false;
    cfg->machine = suite::default_h200();
    return true;
  } catch (const std::exception& e) {
    *err = std::string("the header's config.eval is incomplete: ") + e.what();
    return false;
  }
}

}  // namespace

int cmd_replay(const ReplayArgs& a) {
  trace::Run run;
  std::string err, warn;
  if (!trace::read_run(a.file, &run, &err, &warn)) {
    fmt::print(stderr, "kforge replay: {}\n", err);
    return kBadInput;
  }
  if (!warn.empty()) fmt::print(stderr, "kforge replay: {}\n", warn);
  suite::Paths paths = suite::default_paths();
  eval::EvalConfig cfg;
  if (!recorded_config(run.raw.header["config"]["eval"], paths, &cfg, &err)) {
    fmt::print(stderr, "kforge replay: {}: {}\n", a.file, err);
    return kBadInput;
  }
  if (cfg.settings.backend == sandbox::Backend::cuda &&
      suite::detect_backend() != sandbox::Backend::cuda) {
    fmt::print(stderr,
               "kforge replay: {} was recorded on the cuda backend and this machine has no GPU\n",
               a.file);
    return kBadInput;
  }
  std::map<int, std::string> recorded;  // turn -> status
  for (const trace::VerdictEvent& v : run.verdicts)
    recorded[v.turn] = sandbox::status_name(v.verdict.status);
  std::string dir = paths.runs_dir + "/replay/" + fs::path(a.file).stem().string();
  std::error_code fec;
  fs::create_directories(dir, fec);
  int matched = 0, differed = 0;
  for (const trace::CandidateEvent& c : run.candidates) {
    int turn = c.turn;
    std::string file =
        fmt::format("{}/turn_{}{}", dir, turn, eval::kernel_extension(cfg.settings.backend));
    std::ofstream(file, std::ios::binary) << c.source;
    sandbox::Verdict v;
    bool evaluated =
        eval::evaluate_file(cfg, fs::absolute(file).string(), sandbox::Role::candidate, &v, &err);
    if (int sig = sandbox::interrupt_signal()) {  // the ranks were killed by kforge: no verdict to
                                                  // compare
      fmt::print(stderr, "kforge replay: interrupted by {} at turn {}\n", sandbox::signal_name(sig),
                 turn);
      return sandbox::interrupt_exit_code(sig);
    }
    if (!evaluated) {
      fmt::print(stderr, "kforge replay: turn {}: {}\n", turn, err);
      return kInternal;
    }
    std::string was = recorded.count(turn) ? recorded[turn] : "(none)";
    bool same = was == sandbox::status_name(v.status);
    same ? ++matched : ++differed;
    if (a.json)
      std::puts(json{{"turn", turn},
                     {"recorded", was},
                     {"now", v.status},
                     {"match", same},
                     {"summary", v.summary}}
                    .dump()
                    .c_str());
    else
      fmt::print("turn {}: recorded {}, now {}{}\n", turn, was, sandbox::status_name(v.status),
                 same ? "" : "  <- DIFFERS: " + v.summary);
  }
  if (a.json)
    std::puts(json{{"candidates", matched + differed}, {"matched", matched}, {"differed", differed}}
                  .dump()
                  .c_str());
  else
    fmt::print("{} candidate{}: {} matched, {} differed\n", matched + differed,
               matched + differed == 1 ? "" : "s", matched, differed);
  return differed == 0 ? kOk : kNotCorrect;
}

}  // namespace cli
