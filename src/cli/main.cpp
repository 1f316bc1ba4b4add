// kforge: the command line. Subcommands live in src/cli/cmd_*.cpp; this file only
// parses arguments and dispatches. Exit codes: see src/cli/commands.h and the README.
#include <fmt/core.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/cmd_new_problem.h"
#include "cli/cmd_profile.h"
#include "cli/cmd_replay.h"
#include "cli/cmd_serve.h"
#include "cli/cmd_show.h"
#include "cli/cmd_solve.h"
#include "cli/cmd_sweep.h"
#include "cli/cmd_tune.h"
#include "cli/commands.h"
#include "kf_build_paths.h"
#include "sandbox/interrupt.h"
#include "sandbox/secrets.h"

namespace {

// Adds the options `eval` and `baseline` share: the evaluation's, and their own.
void add_instance_options(CLI::App* app, cli::EvalArgs* a) {
  cli::add_eval_options(app, &a->opt);
  app->add_flag("--json", a->json, "print the verdict as JSON");
  app->add_flag("--compile-only", a->compile_only,
                "stop after the static checks, the build and the symbol check (no GPU needed)");
}

CLI::App* add_problems_command(CLI::App& app, cli::ProblemsArgs* a) {
  CLI::App* problems = app.add_subcommand(
      "problems", "list the problems: kforge's own, or a ParallelKernelBench checkout's (--suite)");
  problems->add_flag("--json", a->json, "print as JSON");
  problems->add_option("--suite", a->suite,
                       "pkb:PATH lists the problems of a ParallelKernelBench checkout");
  return problems;
}

CLI::App* add_eval_command(CLI::App& app, cli::EvalArgs* a, std::vector<std::string>* pos) {
  CLI::App* eval = app.add_subcommand(
      "eval",
      "check and time one kernel in the sandbox: kforge eval PROBLEM [KERNEL] [PARAM=V ...]");
  eval->add_option(
          "args", *pos,
          "PROBLEM, then the kernel file (default: the shipped example), then PARAM=V overrides")
      ->required();
  add_instance_options(eval, a);
  return eval;
}

CLI::App* add_baseline_command(CLI::App& app, cli::EvalArgs* a, std::vector<std::string>* pos) {
  CLI::App* baseline =
      app.add_subcommand("baseline", "time the NCCL baseline: its time, busbw and the roofline");
  baseline->add_option("args", *pos, "PROBLEM, then PARAM=V overrides")->required();
  add_instance_options(baseline, a);
  return baseline;
}

// Positional words: the problem, then a kernel path unless it looks like PARAM=V; the
// PARAM=V words are checked with the options (cli/eval_options.h).
void split_positionals(const std::vector<std::string>& pos, cli::EvalArgs* a, bool kernel_allowed) {
  a->problem = pos[0];
  for (size_t i = 1; i < pos.size(); ++i) {
    if (kernel_allowed && a->kernel.empty() && pos[i].find('=') == std::string::npos)
      a->kernel = pos[i];
    else
      a->params.push_back(pos[i]);
  }
}

// Parses the command line; false with *code set where it is done (help, the version, or
// bad input, which names the command whose --help to read).
bool parse(CLI::App& app, int argc, char** argv, int* code) {
  app.footer(
      "Exit codes: 0 correct / done, 1 the kernel is not correct, 2 bad input, 3 kforge failed.\n"
      "Run `kforge COMMAND --help` for a command's options.");
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::CallForHelp& e) {
    *code = app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    *code = app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    *code = app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    std::string which =
        app.get_subcommands().empty() ? "" : " " + app.get_subcommands()[0]->get_name();
    fmt::print(stderr, "run `kforge{} --help` for the options\n", which);
    *code = cli::kBadInput;
  }
  return false;
}

}  // namespace

// The command, then: a signal that stopped it is its exit status (128+N), whatever the
// command made of the cut-short work.
int dispatch(int argc, char** argv);

int main(int argc, char** argv) {
  // Before anything else runs: no key stays where /proc/<pid>/environ shows it.
  sandbox::take_secrets_from_environment();
  // Before anything can start a child: Ctrl-C, SIGTERM and SIGHUP become requests that
  // kill the children's trees and let the command write what it must (sandbox/interrupt.h).
  sandbox::install_interrupt_handlers();
  // A sweep's sample (cli/cmd_sweep.cpp): it ends, cleanly, when the sweep dies, even by
  // SIGKILL, so that a resumed sweep never meets a sample of the killed one still running.
  if (const char* v = std::getenv("KFORGE_DIE_WITH_PARENT"); v && *v == '1') {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) return 128 + SIGTERM;
  }
  int code = dispatch(argc, argv);
  if (int sig = sandbox::interrupt_signal()) return sandbox::interrupt_exit_code(sig);
  return code;
}

int dispatch(int argc, char** argv) {
  CLI::App app{"kforge: write and prove fast multi-GPU kernels"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kforge ") + KF_VERSION);

  cli::ProblemsArgs problems_args;
  CLI::App* problems = add_problems_command(app, &problems_args);
  cli::EvalArgs eval_args, base_args;
  std::vector<std::string> eval_pos, base_pos;
  CLI::App* eval = add_eval_command(app, &eval_args, &eval_pos);
  CLI::App* baseline = add_baseline_command(app, &base_args, &base_pos);
  cli::SolveArgs solve_args;
  CLI::App* solve = cli::add_solve_command(app, &solve_args);
  cli::ProfileArgs profile_args;
  CLI::App* profile = cli::add_profile_command(app, &profile_args);
  cli::ReplayArgs replay_args;
  CLI::App* replay = cli::add_replay_command(app, &replay_args);
  cli::ShowArgs show_args;
  CLI::App* show = cli::add_show_command(app, &show_args);
  cli::TuneArgs tune_args;
  CLI::App* tune = cli::add_tune_command(app, &tune_args);
  cli::SweepArgs sweep_args;
  cli::SweepCommands sweep = cli::add_sweep_command(app, &sweep_args);
  cli::ReportArgs report_args;
  CLI::App* report = cli::add_report_command(app, &report_args);
  cli::NewProblemArgs new_problem_args;
  CLI::App* new_problem = cli::add_new_problem_command(app, &new_problem_args);
  cli::ServeArgs serve_args;
  CLI::App* serve = cli::add_serve_command(app, &serve_args);
  int code = 0;
  if (!parse(app, argc, argv, &code)) return code;

  if (problems->parsed()) return cli::cmd_problems(problems_args);
  if (solve->parsed()) return cli::cmd_solve(solve_args);
  if (replay->parsed()) return cli::cmd_replay(replay_args);
  if (profile->parsed()) return cli::cmd_profile(profile_args);
  if (show->parsed()) return cli::cmd_show(show_args);
  if (tune->parsed()) return cli::cmd_tune(tune_args);
  if (sweep.status->parsed()) return cli::cmd_sweep_status(sweep_args);
  if (sweep.sweep->parsed()) return cli::cmd_sweep(sweep_args);
  if (report->parsed()) return cli::cmd_report(report_args);
  if (new_problem->parsed()) return cli::cmd_new_problem(new_problem_args);
  if (serve->parsed()) return cli::cmd_serve(serve_args);
  if (eval->parsed()) {
    split_positionals(eval_pos, &eval_args, true);
    return cli::cmd_eval(eval_args);
  }
  if (baseline->parsed()) {
    split_positionals(base_pos, &base_args, false);
    base_args.is_baseline = true;
    return cli::cmd_eval(base_args);
  }
  return cli::kBadInput;
}
