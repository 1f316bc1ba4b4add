// cli/cmd_tune.cpp: `kforge tune`, the builtin search without a conversation.
#include "cli/cmd_tune.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/builtin.h"
#include "cli/commands.h"
#include "sandbox/evaluate.h"
#include "sandbox/interrupt.h"
#include "suite/instance.h"
#include "suite/paths.h"

namespace cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool write_file(const std::string& path, const std::string& text, std::string* err) {
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  std::ofstream o(path, std::ios::binary);
  o << text;
  if (!o) return (*err = "cannot write " + path + ": check that its folder is writable", false);
  return true;
}

// "reg/two_shot blocks=32" -> "reg-two_shot-blocks32": a file name.
std::string slug(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (c == '/' || c == ' ')
      s += '-';
    else if (c != '=')
      s += c;
  }
  return s;
}

bool load(const TuneArgs& a, eval::EvalConfig* cfg, std::string* err) {
  if (a.positionals.empty())
    return (*err = "name a problem: kforge tune PROBLEM (`kforge problems` lists them)", false);
  cfg->paths = suite::default_paths();
  const std::string dir = cfg->paths.problems_dir + "/" + a.positionals[0];
  if (!fs::exists(dir + "/problem.json"))
    return (*err = fmt::format("no problem '{}' in {}; `kforge problems` lists them",
                               a.positionals[0], cfg->paths.problems_dir),
            false);
  if (!suite::load_problem(dir, &cfg->problem, err)) return false;
  if (a.opt.no_time)
    return (*err = "tune picks the fastest correct template: it needs the times (drop --no-time)",
            false);
  return apply_eval_options(a.opt, {a.positionals.begin() + 1, a.positionals.end()}, cfg, err);
}

json trial_json(const agent::Trial& t) {
  return json{{"template", t.pred.tmpl.name()},
              {"source", t.pred.tmpl.source},
              {"predicted_ms", t.pred.ms},
              {"median_ms", t.timed ? json(t.median_ms) : json(nullptr)},
              {"speedup", t.speedup},
              {"status", t.status},
              {"summary", t.summary}};
}

std::string cell(double v, bool known) {
  return known && v > 0 ? fmt::format("{:.4f}", v) : "-";
}

// --predict: the prompt's analysis and the whole ranking.
int print_predictions(const eval::EvalConfig& cfg, bool as_json) {
  suite::Instance inst;
  std::string err;
  if (!agent::search_instance(cfg, &inst, &err))
    return fmt::print(stderr, "kforge tune: {}\n", err), kBadInput;
  const auto ranked = suite::rank_templates(
      suite::template_space(cfg.problem, inst, cfg.settings.backend), inst, cfg.machine);
  if (as_json) {
    json j = {{"problem", cfg.problem.name},
              {"instance", suite::instance_label(inst)},
              {"analysis", suite::analysis_text(cfg.problem, inst, cfg.machine)},
              {"templates", json::array()}};
    for (const suite::Prediction& p : ranked)
      j["templates"].push_back({{"template", p.tmpl.name()},
                                {"source", p.tmpl.source},
                                {"predicted_ms", p.ms},
                                {"bound", p.bound},
                                {"blocks", p.blocks},
                                {"bw_gbps", p.bw_gbps}});
    std::puts(j.dump(2).c_str());
    return kOk;
  }
  fmt::print("{}\n{:<48} {:>10} {:>8} {:>7} {:>8}\n",
             suite::analysis_text(cfg.problem, inst, cfg.machine),
             "template (" + std::string(sandbox::backend_name(cfg.settings.backend)) + ")",
             "pred ms", "bound", "blocks", "GB/s");
  for (const suite::Prediction& p : ranked)
    fmt::print("{:<48} {:>10.4f} {:>8} {:>7} {:>8.0f}\n", p.tmpl.name(), p.ms, p.bound, p.blocks,
               p.bw_gbps);
  return kOk;
}

}  // namespace

CLI::App* add_tune_command(CLI::App& app, TuneArgs* a) {
  CLI::App* s = app.add_subcommand("tune",
                                   "search the expert kernels' templates (mechanism, algorithm, "
                                   "blocks, chunk) for the fastest correct one");
  s->add_option("args", a->positionals, "PROBLEM, then PARAM=V overrides")->required();
  s->add_option("--budget,-n", a->budget, "templates to evaluate at most (default 8)")
      ->check(CLI::Range(1, 10000));
  s->add_flag("--json", a->json, "print the result as JSON");
  s->add_flag("--predict", a->predict_only,
              "print the cost model's analysis and every template's prediction; run nothing");
  s->add_option("--out,-o", a->out,
                "where to write the best kernel (default runs/tune/PROBLEM-best.cu|.cpp)");
  add_eval_options(s, &a->opt);
  return s;
}

int cmd_tune(const TuneArgs& a) {
  eval::EvalConfig cfg;
  std::string err;
  if (!load(a, &cfg, &err)) return fmt::print(stderr, "kforge tune: {}\n", err), kBadInput;
  std::unique_ptr<agent::TemplateSearch> search;
  if (!agent::make_search(cfg, &search, &err))
    return fmt::print(stderr, "kforge tune: {}\n", err), kBadInput;

  if (a.predict_only) return print_predictions(cfg, a.json);
  if (warm_ranks_wanted(a.opt)) eval::use_warm_ranks(&cfg);

  const std::string ext = eval::kernel_extension(cfg.settings.backend);
  const std::string work = sandbox::make_eval_dir(cfg.paths.runs_dir + "/tune");
  if (work.empty())
    return fmt::print(stderr, "kforge tune: cannot create a folder under {}/tune\n",
                      cfg.paths.runs_dir),
           kInternal;
  bool emulated = cfg.settings.backend == sandbox::Backend::host;
  int index = 0;
  auto eval = [&](const suite::Prediction& p, const std::string& source, sandbox::Verdict* v,
                  std::string* e) {
    const std::string path = fmt::format("{}/{:02d}-{}{}", work, ++index, slug(p.tmpl.name()), ext);
    if (!write_file(path, source, e)) return false;
    if (!eval::evaluate_file(cfg, fs::absolute(path).string(), sandbox::Role::candidate, v, e))
      return false;
    if (sandbox::interrupted()) return (*e = "interrupted: the search was stopped", false);
    emulated = emulated || v->emulated;
    return true;
  };
  auto show = [&](const agent::Trial& t) {
    if (!a.json)
      fmt::print("{:>2}  {:<48} {:>10} {:>10} {:>8}  {}\n", search->trials().size(),
                 t.pred.tmpl.name(), cell(t.pred.ms, true), cell(t.median_ms, t.timed),
                 cell(t.speedup, true), sandbox::status_name(t.status));
  };
  if (!a.json)
    fmt::print(
        "kforge tune {} world={} backend={}: {} templates, budget {}\n{:>2}  {:<48} {:>10} {:>10} "
        "{:>8}  {}\n",
        cfg.problem.name, cfg.settings.world, sandbox::backend_name(cfg.settings.backend),
        search->space_size(), a.budget, "#", "template", "pred ms", "median ms", "speedup",
        "status");
  if (!agent::run_search(cfg.problem, search.get(), a.budget, eval, &err, show))
    return fmt::print(stderr, "kforge tune: {}\n", err), kInternal;

  const agent::Trial* best = search->best();
  std::string out =
      a.out.empty() ? fmt::format("{}/tune/{}-best{}", cfg.paths.runs_dir, cfg.problem.name, ext)
                    : a.out;
  if (best) {
    std::string source;
    if (!suite::instantiate_file(cfg.problem, best->pred.tmpl, &source, &err) ||
        !write_file(out, source, &err))
      return fmt::print(stderr, "kforge tune: {}\n", err), kInternal;
  }
  const char* note =
      "times on the host backend or with emulated ranks are not a speed measurement: "
      "the ranking follows them anyway";
  if (a.json) {
    json j = {{"problem", cfg.problem.name},     {"world", cfg.settings.world},
              {"backend", cfg.settings.backend}, {"space", search->space_size()},
              {"trials", json::array()},         {"work_dir", work}};
    for (const agent::Trial& t : search->trials()) j["trials"].push_back(trial_json(t));
    j["best"] = best ? trial_json(*best) : json(nullptr);
    j["out"] = best ? json(out) : json(nullptr);
    if (emulated) j["note"] = note;
    std::puts(j.dump(2).c_str());
  } else {
    if (emulated) fmt::print("note: {}\n", note);
    if (best)
      fmt::print("best: {}{} -> {}\n", best->pred.tmpl.name(),
                 best->timed ? fmt::format(" (median {:.4f} ms)", best->median_ms) : "", out);
    else
      fmt::print("no template was correct ({} tried); see the verdicts under {}\n",
                 search->trials().size(), cfg.paths.runs_dir + "/evals");
  }
  return best ? kOk : kNotCorrect;
}

}  // namespace cli
