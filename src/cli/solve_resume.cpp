// cli/solve_resume.cpp: see solve_resume.h.
#include "cli/solve_resume.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "suite/problem.h"

namespace cli {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool is_session_option(const std::string& name) {
  return name == "headless" || name == "confirm" || name == "out";
}

// CLI11 reads a word list back to front.
bool parse_words(CLI::App& app, std::vector<std::string> words, std::string* err) {
  words.insert(words.begin(), "solve");
  std::reverse(words.begin(), words.end());
  try {
    app.parse(words);
    return true;
  } catch (const CLI::ParseError& e) {
    *err = e.what();
    return false;
  }
}

}  // namespace

std::vector<std::string> given_solve_words(const CLI::App& solve, bool with_positionals,
                                           bool with_session) {
  std::vector<std::string> pos, named;
  for (const CLI::Option* o : solve.get_options()) {
    if (o->count() == 0) continue;
    if (!o->nonpositional()) {
      if (with_positionals) pos.insert(pos.end(), o->results().begin(), o->results().end());
      continue;
    }
    if (o->get_lnames().empty()) continue;
    const std::string& name = o->get_lnames()[0];
    if (name == "resume" || name == "continue" || name == "help") continue;
    if (!with_session && is_session_option(name)) continue;
    if (o->get_expected_max() == 0) {  // a flag
      named.push_back("--" + name);
      continue;
    }
    for (const std::string& v : o->results()) named.insert(named.end(), {"--" + name, v});
  }
  pos.insert(pos.end(), named.begin(), named.end());
  return pos;
}

std::string run_dir_of(const std::string& trajectory) {
  const std::string ext = ".jsonl";
  if (trajectory.size() > ext.size() &&
      trajectory.compare(trajectory.size() - ext.size(), ext.size(), ext) == 0)
    return trajectory.substr(0, trajectory.size() - ext.size());
  return trajectory;
}

bool find_resumed_run(const SolveArgs& a, const suite::Paths& paths, std::string* path,
                      std::string* err) {
  if (!a.resume.empty()) {
    std::string p = a.resume;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (fs::is_directory(p)) p += ".jsonl";
    if (!fs::is_regular_file(p))
      return (*err = fmt::format(
                  "--resume {}: no such run (give a run's folder or its .jsonl trajectory, e.g. "
                  "runs/PROBLEM/NAME; `ls {}/PROBLEM` lists them, or use --continue for the "
                  "newest)",
                  a.resume, paths.runs_dir),
              false);
    *path = p;
    return true;
  }
  std::string problem = a.positionals.empty() ? "" : a.positionals[0];
  if (problem.empty() && !suite::default_problem(paths.problems_dir, &problem, err)) return false;
  if (!a.opt.suite.empty()) problem = "pkb-" + problem;
  fs::path dir = fs::path(paths.runs_dir) / problem;
  std::error_code ec;
  fs::file_time_type newest{};
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    if (f.path().extension() != ".jsonl") continue;
    fs::file_time_type t = f.last_write_time(ec);
    if (!ec && (path->empty() || t > newest)) newest = t, *path = f.path().string();
  }
  if (path->empty())
    return (*err = fmt::format("--continue: no run of {} in {} to continue; start one with "
                               "`kforge solve {}`",
                               problem, dir.string(), problem),
            false);
  return true;
}

bool resumed_args(const SolveArgs& given, const std::string& path, const json& header,
                  SolveArgs* out, std::string* err) {
  if (!header.contains("args") || !header["args"].is_array())
    return (*err = path +
                   ": its header has no command line (a kforge without --resume wrote it), so "
                   "it cannot be resumed; start a new run with `kforge solve`",
            false);
  *out = SolveArgs{};
  CLI::App first("kforge");
  add_solve_command(first, out);
  if (!parse_words(first, header["args"].get<std::vector<std::string>>(), err))
    return (*err = path + ": its header's command line no longer parses (" + *err +
                   "); start a new run with `kforge solve`",
            false);
  // What the person gives now wins: parsed into the same struct, only those options move.
  CLI::App now("kforge");
  add_solve_command(now, out);
  std::vector<std::string> words = given_solve_words(*given.cli, false, true);
  if (!parse_words(now, words, err)) return false;  // parsed once already: cannot fail
  out->resume = given.resume;
  out->continue_run = given.continue_run;
  out->cli = nullptr;  // the apps above are gone
  return true;
}

bool prepare_resume(const SolveArgs& given, const suite::Paths& paths, SolveArgs* out,
                    std::string* path, trace::Run* run, std::string* err) {
  if (!given.resume.empty() && given.continue_run)
    return (*err = "--resume RUN and --continue both name a run to go on with: give one", false);
  if (!given.resume.empty() && !given.positionals.empty())
    return (*err = fmt::format("--resume {} goes on with that run's own problem: drop '{}' (or "
                               "start a new run with `kforge solve {}`)",
                               given.resume, given.positionals[0], given.positionals[0]),
            false);
  if (given.continue_run && given.positionals.size() > 1)
    return (*err = fmt::format("--continue takes the problem alone (its run keeps its own "
                               "parameters): drop '{}'",
                               given.positionals[1]),
            false);
  if (!given.cli) return (*err = "--resume needs the command line it was given", false);
  if (!find_resumed_run(given, paths, path, err)) return false;
  std::string warn;
  if (!trace::read_run(*path, run, err, &warn))
    return (*err = *err + " (--resume needs a kforge trajectory: runs/PROBLEM/NAME.jsonl)", false);
  if (!warn.empty()) fmt::print(stderr, "kforge solve: {}\n", warn);
  return resumed_args(given, *path, run->raw.header, out, err);
}

}  // namespace cli
