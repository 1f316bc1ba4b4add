// sandbox/rank/spawner.h: who starts the runners of a warm rank (rank/serve.h). A judge
// serves many evals, each with fresh runners (kforge-runner), but once hardened
// (rank/harden.h) it can neither fork nor exec nor signal another process. So in serve
// mode, first thing after the reaper and before MPI or any secret exists, it forks this
// helper: it starts each runner on request, hands the judge its end of the runner's
// socket (SCM_RIGHTS), and reaps it (the runner is the helper's child, not the judge's).
// The helper runs no untrusted code; it dies with its judge (PR_SET_PDEATHSIG), and its
// runners die with it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sandbox::rank {

// Forks the helper (call before MPI_Init, before anything secret). False with *err.
bool start_spawner(std::string* err);

// Whether this process has a helper (serve mode).
bool spawner_active();

// The helper's pid: a runner checks that its parent is the process named on its command
// line (sandbox/runner/main.cpp).
pid_t spawner_pid();

// Starts `argv` (argv[0] the program) with `env` in the helper; *pid is the runner's pid,
// *fd the judge's end of a fresh SOCK_SEQPACKET pair whose other end the runner holds
// as descriptor `child_fd`.
bool spawner_spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   int child_fd, pid_t* pid, int* fd, std::string* err);

// Starts `argv` (argv[0] the program) with `env` in this process, holding the child's end
// of a fresh SOCK_SEQPACKET pair as descriptor `child_fd`; *pid and this process's end *fd.
// What the helper does for spawner_spawn, and a cold judge for itself (runner_link.cpp).
bool spawn_with_socket(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                       int child_fd, pid_t* pid, int* fd, std::string* err);

// Waits up to wait_ms for this process's child `pid` to end, then SIGKILLs it and waits 1 s
// more: `pid` when it ended (its wait status in *status), 0 when it still runs, -1 on error.
pid_t wait_or_kill(pid_t pid, int wait_ms, int* status);

// Waits up to wait_ms for the runner `pid` to end, then SIGKILLs it and waits 1 s more.
// Returns 1 with its wait status in *status when it ended, 0 when it still runs, -1 when
// it is lost (not the helper's, or the helper is gone).
int spawner_reap(pid_t pid, int wait_ms, int* status);

}  // namespace sandbox::rank
