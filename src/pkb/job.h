// pkb/job.h: one job of kforge's PKB driver (sandbox/pkb/pkb_eval.py) under kforge's
// sandbox: its command line, and the run itself in the scrubbed environment, confined where
// the machine confines (the checkout, the solution, the driver's folder and the python's
// installation read-only; the work folder and this source's extension folder writable),
// killed past its limit. And the driver's --probe, the setup checked with no candidate.
#pragma once

#include <string>
#include <vector>

#include "pkb/evaluate.h"
#include "sandbox/confine.h"
#include "sandbox/process.h"

namespace pkb {

// The job's command line for spec (resolved python and driver paths).
std::vector<std::string> job_argv(const EvalSpec& spec);

// Runs job_argv(spec) and then `extra` arguments as the job; *cr says how it was confined.
// False (with *err) when it could not start.
bool run_job(const EvalSpec& spec, const std::vector<std::string>& extra,
             sandbox::ProcessResult* pr, sandbox::ConfinedRun* cr, std::string* err);

// What a jail must show of the Python a job runs: the prefix it is in (a virtual
// environment's root; a stand-in's own folder) and, through the venv's python3 link, the
// interpreter's installation. /usr is in every jail already.
std::vector<std::string> python_dirs(const std::string& python,
                                     const std::vector<std::string>& env);

// Whether this setup can run spec's jobs at all, asked with no candidate loaded (the
// driver's --probe, in <work_dir>/probe): *why is "" when it can, else what to change.
// False (with *err) when kforge could not run the probe.
bool probe_setup(const EvalSpec& spec, std::string* why, std::string* err);

}  // namespace pkb
