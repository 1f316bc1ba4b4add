// sandbox/rank/harden.h: what a rank gives up before it loads untrusted code.
#pragma once

#include <string>
#include <vector>

#include "job.h"

namespace sandbox::rank {

// Applied after MPI_Init and the heap set-up, before the candidate is loaded:
//  - chdir into the first job's <dir>/scratch (created), so relative paths land there;
//  - RLIMIT_CORE 0, RLIMIT_FSIZE 1 GiB, RLIMIT_CPU the jobs' limits.total_s + 60 s on
//    every core (a backstop behind the host side's watchdog);
//  - Landlock (best effort, Linux >= 5.13): writes only beneath each job's <dir>, /dev (device
//    nodes, /dev/shm) and OpenMPI's session directory (and the sandbox's private /tmp
//    under a tool: job.h `under_tool`); reads stay allowed everywhere.
//    It binds this thread and the threads and processes it starts from here on (the
//    candidate runs on this thread), not threads MPI or CUDA started earlier.
//  - a seccomp filter on every thread (seccomp.cpp): no exec, no new process (threads
//    only), no raw packet sockets, signals to itself only, no ptrace or other
//    process's memory, no mount, namespace, module, BPF, keyring or io_uring calls. The
//    calls fail with EPERM: whatever the spelling (a symbol, a raw instruction).
// Appends one "isolation: ..." note (and notes on anything that failed) to *notes.
// A warm rank (rank/serve.h) names its set's root: writes beneath it instead of beneath
// each job's <dir> (its later evals' folders are there), and RLIMIT_CPU per request
// (set_cpu_budget).
void harden(const std::vector<Job>& jobs, const std::string& serve_root,
            std::vector<std::string>* notes);

// The CPU seconds `jobs` may take: their limits.total_s (600 where none) and 60 s more, on
// every core.
double cpu_budget_s(const std::vector<Job>& jobs);

// Sets RLIMIT_CPU's soft limit (SIGXCPU) to the CPU time used so far and `more_s`
// seconds, under the hard limit harden set.
void set_cpu_budget(double more_s);

// What harden() does, with the scratch folder, the CPU-time limit (seconds), the folders
// Landlock leaves writable and the seccomp variant given: the runner (sandbox/runner/)
// takes the same steps with its own.
void harden_process(const std::string& scratch, double cpu_s,
                    const std::vector<std::string>& writable, bool no_sockets,
                    std::vector<std::string>* notes);

// The seccomp filter alone: true when loaded; otherwise *why says why not. With
// `no_sockets` (the runner), no socket of any family can be created either.
bool apply_seccomp(bool no_sockets, std::string* why);

// Landlock alone: true when the ruleset is in force; otherwise *why says why not.
bool apply_landlock(const std::vector<std::string>& writable, std::string* why);

}  // namespace sandbox::rank
