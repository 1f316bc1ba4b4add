// src/cli/cmd_sweep.cpp: see cmd_sweep.h.
#include "cli/cmd_sweep.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "cli/cmd_show.h"
#include "cli/commands.h"
#include "suite/paths.h"
#include "suite/problem.h"
#include "sweep/report_html.h"
#include "sweep/report_table.h"
#include "sweep/sweep.h"

namespace cli {

namespace fs = std::filesystem;

namespace {

std::string self_exe() {
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).string();
}

// The problems named (a name, "all", or "category:NAME"), in the suite's order, with
// their categories. False with a message naming the word that matched nothing.
bool resolve_problems(const std::vector<std::string>& words, std::vector<std::string>* names,
                      std::vector<std::string>* cats, std::string* err) {
  std::vector<suite::Problem> all;
  if (!suite::load_all_problems(suite::default_paths().problems_dir, &all, err)) return false;
  for (const std::string& w : words) {
    size_t before = names->size();
    for (const suite::Problem& p : all) {
      bool hit = w == "all" || w == p.name || w == "category:" + p.category;
      if (hit && std::find(names->begin(), names->end(), p.name) == names->end()) {
        names->push_back(p.name);
        cats->push_back(p.category);
      }
    }
    if (names->size() == before && std::find(names->begin(), names->end(), w) == names->end()) {
      *err =
          "no problem matches '" + w + "' (a name from `kforge problems`, all, or category:NAME)";
      return false;
    }
  }
  return true;
}

std::vector<std::string> solve_args(const SweepArgs& a) {
  std::vector<std::string> s = eval_option_args(a.opt);
  auto add = [&](const char* flag, const std::string& v) { s.insert(s.end(), {flag, v}); };
  if (a.max_turns > 0) add("--max-turns", std::to_string(a.max_turns));
  if (a.max_tokens > 0) add("--max-tokens", std::to_string(a.max_tokens));
  if (a.max_cost > 0) add("--max-cost", fmt::format("{}", a.max_cost));
  if (a.max_wall > 0) add("--max-wall", fmt::format("{}", a.max_wall));
  if (a.target > 0) add("--target", fmt::format("{}", a.target));
  if (!a.base_url.empty()) add("--base-url", a.base_url);
  if (!a.api_key_env.empty()) add("--api-key-env", a.api_key_env);
  if (!a.config_file.empty()) add("--config", a.config_file);
  return s;
}

// One line per event when not on a terminal; a line rewritten in place on one. The ETA is
// this run's mean seconds per finished sample times what is left.
void print_progress(const sweep::Progress& p, bool tty, std::chrono::steady_clock::time_point t0,
                    int done_before) {
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int ran = p.done - done_before, left = p.total - p.done;
  std::string eta = ran > 0 && left > 0 ? fmt::format(", ETA {:.0f} s", s / ran * left) : "";
  std::string line =
      fmt::format("sweep: {}/{} done, {} running, {} waiting, {} correct, ${:.3f}{}{}", p.done,
                  p.total, p.running, left - p.running, p.correct, p.cost_usd, eta,
                  p.last.empty() ? "" : "; last: " + p.last);
  if (tty)
    fmt::print(stderr, "\r\033[K{}", line);
  else
    fmt::print(stderr, "{}\n", line);
}

}  // namespace

SweepCommands add_sweep_command(CLI::App& app, SweepArgs* a) {
  SweepCommands c;
  c.sweep = app.add_subcommand(
      "sweep", "K samples of `kforge solve` per problem and model, resumable, with pass@k");
  c.sweep->add_option("problems", a->problems, "problem names, all, or category:NAME");
  c.sweep->add_option("--samples,-k", a->samples, "samples per problem and model (default 4)")
      ->check(CLI::Range(1, 100000));
  c.sweep->add_option("--model,-m", a->models, "a model (repeat for several; default builtin)");
  c.sweep->add_option("--mode", a->mode, "direct or agent")
      ->check(CLI::IsMember({"direct", "agent"}));
  c.sweep->add_option("--jobs,-j", a->jobs, "samples at once (default 1)")
      ->check(CLI::Range(1, 1024));
  c.sweep->add_option("--out,-o", a->out, "the sweep's folder (default runs/sweeps/<time>)");
  c.sweep->add_option("--max-turns", a->max_turns, "per sample, as solve's");
  c.sweep->add_option("--max-tokens", a->max_tokens, "per sample, as solve's");
  c.sweep->add_option("--max-cost", a->max_cost, "USD per sample, as solve's");
  c.sweep->add_option("--max-wall", a->max_wall, "seconds per sample, as solve's");
  c.sweep->add_option("--target", a->target, "speedup to stop at, as solve's");
  c.sweep->add_option("--base-url", a->base_url, "as solve's");
  c.sweep->add_option("--api-key-env", a->api_key_env, "as solve's");
  c.sweep->add_option("--config", a->config_file, "as solve's");
  add_eval_options(c.sweep, &a->opt);
  c.status = c.sweep->add_subcommand("status", "a sweep's metrics by model, category, problem");
  c.status->add_option("dir", a->status_dir, "the sweep's folder")->required();
  c.status->add_flag("--json", a->json, "as JSON");
  c.status->add_flag("--csv", a->csv, "as CSV");
  c.report = app.add_subcommand("report", "a sweep as one self-contained HTML file");
  c.report->add_option("dir", a->status_dir, "the sweep's folder")->required();
  c.report->add_option("--out,-o", a->report_file, "the file (default DIR/report.html)");
  return c;
}

int cmd_sweep(const SweepArgs& a) {
  sweep::SweepConfig cfg;
  std::vector<std::string> names, cats;
  std::string err;
  std::vector<std::string> words =
      a.problems.empty() ? std::vector<std::string>{"all"} : a.problems;
  if (!resolve_problems(words, &names, &cats, &err)) {
    fmt::print(stderr, "kforge sweep: {}\n", err);
    return kBadInput;
  }
  std::vector<std::string> models =
      a.models.empty() ? std::vector<std::string>{"builtin"} : a.models;
  cfg.samples = sweep::plan(names, cats, models, a.samples);
  cfg.solve_args = solve_args(a);
  cfg.mode = a.mode;
  cfg.jobs = a.jobs;
  std::string out = a.out.empty() ? suite::default_paths().runs_dir + "/sweeps/" +
                                        fmt::format("{}", static_cast<long long>(time(nullptr)))
                                  : a.out;
  std::error_code ec;
  fs::create_directories(out, ec);
  cfg.out = fs::absolute(out).string();
  cfg.kforge_bin = self_exe();
  // A Slurm array task writes a ledger of its own and takes its share of the samples.
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* count = std::getenv("SLURM_ARRAY_TASK_COUNT");
  if (task && count && std::atoi(count) > 0) {
    cfg.task = std::atoi(task);
    cfg.tasks = std::atoi(count);
  }
  cfg.ledger_file = cfg.out + (cfg.tasks > 1 ? fmt::format("/ledger-{}.jsonl", cfg.task)
                                             : std::string("/ledger.jsonl"));
  fmt::print(stderr, "kforge sweep: {} samples ({} problems x {} models x {}) into {}\n",
             cfg.samples.size(), names.size(), models.size(), a.samples, cfg.out);
  bool tty = isatty(2) && !std::getenv("NO_COLOR");
  auto t0 = std::chrono::steady_clock::now();
  int done_before = -1;
  bool ok = sweep::run_sweep(
      cfg,
      [&](const sweep::Progress& p) {
        if (done_before < 0) done_before = p.done;  // the first report: what the ledger had
        print_progress(p, tty, t0, done_before);
      },
      &err);
  if (tty) fmt::print(stderr, "\n");
  if (!ok) {
    fmt::print(stderr, "kforge sweep: {}\n", err);
    return err.find("input is bad") != std::string::npos ? kBadInput : kInternal;
  }
  SweepArgs st = a;
  st.status_dir = cfg.out;
  return cmd_sweep_status(st);
}

int cmd_sweep_status(const SweepArgs& a) {
  std::vector<sweep::Record> recs;
  int torn = 0;
  std::string err;
  if (!sweep::read_ledgers(a.status_dir, &recs, &torn, &err)) {
    fmt::print(stderr, "kforge sweep status: {}\n", err);
    return kBadInput;
  }
  std::vector<sweep::Record> done;
  for (const auto& [key, r] : sweep::finished(recs)) done.push_back(r);
  std::vector<sweep::Row> rows = sweep::summarize(done);
  if (a.json)
    fmt::print("{}\n", sweep::rows_json(rows).dump(2));
  else if (a.csv)
    fmt::print("{}", sweep::rows_csv(rows));
  else
    fmt::print("{}{} finished samples in {}{}\n", sweep::rows_table(rows), done.size(),
               a.status_dir, torn ? fmt::format(" ({} torn ledger lines skipped)", torn) : "");
  return kOk;
}

int cmd_report(const SweepArgs& a) {
  std::vector<sweep::Record> recs;
  int torn = 0;
  std::string err;
  if (!sweep::read_ledgers(a.status_dir, &recs, &torn, &err)) {
    fmt::print(stderr, "kforge report: {}\n", err);
    return kBadInput;
  }
  sweep::ReportInput in;
  in.dir = fs::absolute(a.status_dir).string();
  for (const auto& [key, r] : sweep::finished(recs)) in.samples.push_back(r);
  in.render_trajectory = [](const std::string& path) {
    trace::Trajectory t;
    std::string e, warn;
    return trace::read_trajectory(path, &t, &e, &warn) ? render_trajectory(t, false, warn) : "";
  };
  char when[64];
  time_t now = time(nullptr);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  in.generated = when;
  std::string file = a.report_file.empty() ? in.dir + "/report.html" : a.report_file;
  std::ofstream(file) << sweep::report_html(in);
  if (!fs::exists(file)) {
    fmt::print(stderr, "kforge report: cannot write {}\n", file);
    return kInternal;
  }
  fmt::print("{}\n", file);
  return kOk;
}

}  // namespace cli
