// cli/cmd_serve.cpp: see cmd_serve.h.
#include "cli/cmd_serve.h"

#include <fmt/core.h>

#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "cli/pkb_serve.h"
#include "eval/serve.h"
#include "suite/paths.h"

namespace cli {

CLI::App* add_serve_command(CLI::App& app, ServeArgs* a) {
  CLI::App* s = app.add_subcommand(
      "serve",
      "keep warm ranks for other kforge commands: eval, solve and tune with "
      "KFORGE_SERVE=SOCKET run their evals on them (Ctrl-C ends it and its ranks)");
  s->add_option("--socket", a->socket, "the Unix socket to listen on (default <runs>/serve.sock)");
  s->add_option("--max-sets", a->max_sets,
                "warm sets kept at once, one per problem, sizes and settings (default 4; each "
                "holds its ranks' device contexts)")
      ->check(CLI::Range(1, 64));
  return s;
}

int cmd_serve(const ServeArgs& a) {
  suite::Paths paths = suite::default_paths();
  eval::ServeOptions o;
  o.socket = a.socket.empty() ? paths.runs_dir + "/serve.sock"
                              : std::filesystem::absolute(a.socket).string();
  o.max_sets = a.max_sets;
  const std::string evals_dir = paths.runs_dir + "/evals";
  pkb::WarmPool interpreters(evals_dir, a.max_sets);
  o.pkb = [&](const eval::ServeRequest& r) { return serve_pkb_eval(r, &interpreters, evals_dir); };
  std::string err;
  auto ready = [&] {
    fmt::print(stderr,
               "kforge serve: listening on {}\n"
               "  export KFORGE_SERVE={}\n"
               "and `kforge eval`, `solve` and `tune` run their evals on this server's warm "
               "ranks (their verdicts say \"warm ranks: eval N of the set\"), and PKB evals "
               "(--suite pkb:...) on its warm interpreters. Ctrl-C ends it.\n",
               o.socket, o.socket);
  };
  if (!eval::serve_evals(o, paths, ready, &err)) {
    fmt::print(stderr, "kforge serve: {}\n", err);
    return kBadInput;
  }
  fmt::print(stderr, "kforge serve: stopped; its ranks have ended\n");
  return kOk;
}

}  // namespace cli
