// cli/solve_resume.h: `kforge solve --resume RUN` and `--continue`: which run, and the
// options it goes on with. A run's header keeps the command-line words that made it
// (`args`: the problem, its PARAM=V words, the model, the budgets, the evaluation's
// options; not --headless, --confirm or --out, which are how this sitting looks). A
// resume parses those words again and then the options given at resume time on top, so
// that what the person gives now wins and everything else is the run's own. Budgets
// given (or kept) are limits for the resumed part (agent/resume.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/cmd_solve.h"
#include "suite/paths.h"
#include "trace/run.h"

namespace cli {

// The words of the options `solve` was given (each as --name VALUE, flags as --name),
// without --resume and --continue; with_positionals: the problem and PARAM=V words first;
// with_session: --headless, --confirm and --out too.
std::vector<std::string> given_solve_words(const CLI::App& solve, bool with_positionals,
                                           bool with_session);

// The trajectory --resume RUN (a run's folder or its .jsonl) or --continue (the newest
// run of the problem given, or of the default problem) names. False with a message that
// names what was given and what to do.
bool find_resumed_run(const SolveArgs& a, const suite::Paths& paths, std::string* path,
                      std::string* err);

// The options a resumed run goes on with: the header's `args` of `header`, then the
// options given now. False with a message naming the trajectory when its header has no
// command line or its words no longer parse.
bool resumed_args(const SolveArgs& given, const std::string& path, const nlohmann::json& header,
                  SolveArgs* out, std::string* err);

// --resume / --continue as given: the run's trajectory (*path, read into *run) and the
// options it goes on with (*out). False with a message naming the bad input: both given,
// a problem given with --resume, a run that is not there or does not read.
bool prepare_resume(const SolveArgs& given, const suite::Paths& paths, SolveArgs* out,
                    std::string* path, trace::Run* run, std::string* err);

// The run's folder (its workspace) for its trajectory file: the path without ".jsonl".
std::string run_dir_of(const std::string& trajectory);

}  // namespace cli
