// src/sweep/sweep.cpp: see sweep.h.
#include "sweep/sweep.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "sandbox/process.h"
#include "sandbox/secrets.h"
#include "trace/trace.h"

extern char** environ;

namespace sweep {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string model_dir(const std::string& model) {
  std::string d;
  for (char ch : model)
    d += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '.' ? ch : '_';
  return d.empty() ? "default" : d;
}

std::vector<Sample> plan(const std::vector<std::string>& problems,
                         const std::vector<std::string>& categories,
                         const std::vector<std::string>& models, int samples) {
  std::vector<Sample> out;
  for (const std::string& m : models)
    for (size_t p = 0; p < problems.size(); ++p)
      for (int i = 0; i < samples; ++i)
        out.push_back({problems[p], p < categories.size() ? categories[p] : "", m, i});
  return out;
}

namespace {

// The child's environment: this process's, the keys it took back in (the child is
// kforge, which takes them out again), the sample's own runs folder, and death with us.
std::vector<std::string> child_env(const std::string& dir) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    if (v.rfind("KFORGE_RUNS=", 0) != 0 && v.rfind("KFORGE_DIE_WITH_PARENT=", 0) != 0)
      env.push_back(v);
  }
  for (const std::string& s : sandbox::taken_secret_entries()) env.push_back(s);
  env.push_back("KFORGE_RUNS=" + dir + "/runs");
  env.push_back("KFORGE_DIE_WITH_PARENT=1");
  return env;
}

// The first correct kernel's turn, and what the model was paid up to it, from the
// trajectory: replies add their tokens and dollars until a verdict says correct.
void first_correct(Record* r) {
  trace::Trajectory t;
  std::string err, warn;
  if (r->trajectory.empty() || !trace::read_trajectory(r->trajectory, &t, &err, &warn)) return;
  long long tokens = 0;
  double cost = 0;
  for (const json& e : t.events) {
    std::string type = e.value("type", "");
    if (type == "reply" && e.contains("usage")) {
      tokens += e["usage"].value("input_tokens", 0LL) + e["usage"].value("output_tokens", 0LL);
      cost += e.value("cost_usd", 0.0);
    } else if (type == "verdict" && e.contains("verdict") &&
               e["verdict"].value("status", "") == "correct") {
      r->correct_turn = e.value("turn", 0);
      r->tokens_to_correct = tokens;
      r->cost_to_correct = cost;
      return;
    }
  }
}

// The sample's outcome from its verdict.json (the best verdict, else the last, with the
// solve's own figures under "solve").
void read_outcome(const std::string& dir, const sandbox::ProcessResult& pr, Record* r) {
  r->exit_code = pr.signal ? 128 + pr.signal : pr.exit_code;
  std::ifstream in(dir + "/verdict.json");
  json v = json::parse(in, nullptr, false);
  if (v.is_discarded() || !v.is_object() || !v.contains("solve")) {
    r->status = "error";
    std::string out = pr.output.size() > 600 ? pr.output.substr(pr.output.size() - 600) : pr.output;
    r->message = "no verdict.json: " + out;
    return;
  }
  const json& s = v["solve"];
  r->status = v.value("status", "no_candidate");
  r->correct = r->status == "correct";
  r->speedup = v.value("speedup", 0.0);
  r->turns = s.value("turns", 0);
  r->best_turn = s.value("best_turn", 0);
  r->tokens = s.value("tokens_in", 0LL) + s.value("tokens_out", 0LL);
  r->cost_usd = s.value("cost_usd", 0.0);
  r->trajectory = s.value("trajectory", "");
  if (s.contains("message")) r->status = "error", r->message = s.value("message", "");
  first_correct(r);
}

struct Shared {
  const SweepConfig& cfg;
  std::vector<Sample> todo;
  std::atomic<size_t> next{0};
  std::mutex mu;
  Progress progress;
  std::string error;  // the first fatal error
  const std::function<void(const Progress&)>& report;
};

bool run_one(Shared& sh, const Sample& s, std::string* err) {
  const SweepConfig& cfg = sh.cfg;
  std::string dir =
      fmt::format("{}/samples/{}/{}/{}", cfg.out, s.problem, model_dir(s.model), s.index);
  std::error_code ec;
  fs::remove_all(dir, ec);  // an earlier, unfinished attempt
  fs::create_directories(dir, ec);
  Record r;
  r.problem = s.problem;
  r.category = s.category;
  r.model = s.model;
  r.index = s.index;
  r.dir = dir;
  r.state = "started";
  {
    std::lock_guard<std::mutex> lock(sh.mu);
    if (!append_record(cfg.ledger_file, r, err)) return false;
  }
  sandbox::ProcessSpec spec;
  spec.argv = {cfg.kforge_bin, "solve",  s.problem, "--headless", "--model",
               s.model,        "--mode", cfg.mode,  "--out",      dir};
  spec.argv.insert(spec.argv.end(), cfg.solve_args.begin(), cfg.solve_args.end());
  spec.env = child_env(dir);
  sandbox::ProcessResult pr;
  if (!sandbox::run_process(spec, &pr, err)) return false;
  if (pr.interrupted) {
    *err = "interrupted";
    return false;
  }
  if (!pr.killed && pr.exit_code == 2) {  // bad input: every sample would say the same
    *err = fmt::format("kforge solve {} said its input is bad:\n{}", s.problem, pr.output);
    return false;
  }
  read_outcome(dir, pr, &r);
  r.state = "done";
  r.seconds = pr.seconds;
  std::lock_guard<std::mutex> lock(sh.mu);
  if (!append_record(cfg.ledger_file, r, err)) return false;
  Progress& p = sh.progress;
  ++p.done;
  --p.running;
  p.correct += r.correct ? 1 : 0;
  p.cost_usd += r.cost_usd;
  p.last = fmt::format("{} {} #{}: {}", s.problem, s.model, s.index, r.status);
  if (sh.report) sh.report(p);
  return true;
}

void worker(Shared& sh) {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(sh.mu);
      if (!sh.error.empty()) return;
    }
    size_t i = sh.next++;
    if (i >= sh.todo.size()) return;
    {
      std::lock_guard<std::mutex> lock(sh.mu);
      ++sh.progress.running;
      if (sh.report) sh.report(sh.progress);
    }
    std::string err;
    if (!run_one(sh, sh.todo[i], &err)) {
      std::lock_guard<std::mutex> lock(sh.mu);
      if (sh.error.empty()) sh.error = err;
      return;
    }
  }
}

}  // namespace

bool run_sweep(const SweepConfig& cfg, const std::function<void(const Progress&)>& on_progress,
               std::string* err) {
  std::vector<Record> records;
  int torn = 0;
  if (!read_ledgers(cfg.out, &records, &torn, err)) return false;
  std::map<std::string, Record> done = finished(records);
  Shared sh{cfg, {}, {}, {}, {}, {}, on_progress};
  for (size_t i = 0; i < cfg.samples.size(); ++i) {
    const Sample& s = cfg.samples[i];
    if (static_cast<int>(i % cfg.tasks) != cfg.task) continue;
    ++sh.progress.total;
    Record key;
    key.problem = s.problem;
    key.model = s.model;
    key.index = s.index;
    auto it = done.find(sample_key(key));
    if (it == done.end()) {
      sh.todo.push_back(s);
      continue;
    }
    ++sh.progress.skipped;
    ++sh.progress.done;
    sh.progress.correct += it->second.correct ? 1 : 0;
    sh.progress.cost_usd += it->second.cost_usd;
  }
  if (on_progress) on_progress(sh.progress);
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, cfg.jobs); ++j) threads.emplace_back(worker, std::ref(sh));
  for (auto& t : threads) t.join();
  if (!sh.error.empty()) *err = sh.error;
  return sh.error.empty();
}

}  // namespace sweep
