// cli/cmd_serve.h: `kforge serve`: warm ranks for other kforge commands (eval/serve.h).
// It listens on a Unix socket (default <runs>/serve.sock) until Ctrl-C or SIGTERM; with
// KFORGE_SERVE=SOCKET in their environment, `eval`, `solve` and `tune` send their
// candidates' evals there. Exit 0 after a clean stop (by a signal: 128+N, as every
// command), 2 when it cannot listen.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace cli {

struct ServeArgs {
  std::string socket;  // "" for <runs>/serve.sock
  int max_sets = 4;
};

CLI::App* add_serve_command(CLI::App& app, ServeArgs* a);
int cmd_serve(const ServeArgs& a);

}  // namespace cli
