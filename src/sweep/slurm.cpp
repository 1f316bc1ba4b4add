// src/sweep/slurm.cpp: see slurm.h.
#include "sweep/slurm.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sandbox/process.h"

namespace sweep {

namespace fs = std::filesystem;

namespace {

// The tasks' log, as an sbatch filename pattern: '%' in the folder's name is literal.
std::string task_log_pattern(const std::string& out) {
  std::string p;
  for (char c : out) p += c == '%' ? std::string("%%") : std::string(1, c);
  return p + "/slurm/task-%a.log";
}

std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

int default_array_size(int samples, int jobs) {
  int per_task = std::max(1, jobs);
  int n = (samples + per_task - 1) / per_task;
  return std::max(1, std::min({n, 32, samples}));
}

std::string reserved_sbatch_arg(const std::vector<std::string>& args) {
  // What kforge sets: the array and the log files, and the script itself.
  static const char* kLong[] = {"--array",     "--output",   "--error",
                                "--open-mode", "--parsable", "--wrap"};
  static const char* kShort[] = {"-a", "-o", "-e"};
  for (const std::string& a : args) {
    for (const char* l : kLong)
      if (a == l || a.rfind(std::string(l) + "=", 0) == 0) return a;
    for (const char* s : kShort)
      if (a.rfind(s, 0) == 0) return a;
  }
  return "";
}

std::string sh_quote(const std::string& word) {
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::vector<std::string> sbatch_argv(const SlurmJob& job, const std::string& script) {
  std::vector<std::string> a = {"sbatch",
                                "--parsable",
                                fmt::format("--array=0-{}", job.array_size - 1),
                                "--job-name=kforge-sweep",
                                "--output=" + task_log_pattern(job.out),
                                "--open-mode=append"};
  a.insert(a.end(), job.sbatch_args.begin(), job.sbatch_args.end());
  a.push_back(script);
  return a;
}

std::string batch_script(const SlurmJob& job) {
  std::string submitted;
  for (const std::string& w : sbatch_argv(job, job.out + "/slurm/sweep.sbatch"))
    submitted += (submitted.empty() ? "" : " ") + sh_quote(w);
  // One flag and its value per line, for a reader.
  std::string cmd = "exec " + sh_quote(job.kforge_bin);
  for (const std::string& w : job.sweep_argv)
    cmd += (w.rfind("--", 0) == 0 ? " \\\n  " : " ") + sh_quote(w);
  return fmt::format(
      "#!/bin/sh\n"
      "# A `kforge sweep` as a Slurm array task, written by `kforge sweep --slurm`\n"
      "# (src/sweep/slurm.h). Every task runs this same sweep: SLURM_ARRAY_TASK_ID and\n"
      "# SLURM_ARRAY_TASK_COUNT give it every COUNT-th sample and a ledger of its own,\n"
      "# ledger-<task>.jsonl; it skips what any ledger has finished, so submitting this\n"
      "# again runs only what is left. `kforge sweep status` follows it. Submitted as:\n"
      "#   {}\n"
      "cd {} || exit 2\n"
      "{}\n",
      submitted, sh_quote(job.cwd), cmd);
}

bool parse_job_id(const std::string& output, std::string* id, std::string* err) {
  // --parsable prints "jobid[;cluster]" as its last line; warnings may come first.
  std::istringstream in(output);
  std::string last;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) last = line;
  std::string head = last.substr(0, last.find(';'));
  bool digits = !head.empty() &&
                std::all_of(head.begin(), head.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    *err = "sbatch printed no job id: " + (output.empty() ? std::string("(nothing)") : output);
    return false;
  }
  *id = head;
  return true;
}

bool submit(const SlurmJob& job, const std::vector<std::string>& env, std::string* job_id,
            std::string* err) {
  std::string dir = job.out + "/slurm", script = dir + "/sweep.sbatch";
  std::error_code ec;
  fs::create_directories(dir, ec);
  {
    std::ofstream f(script);
    f << batch_script(job);
    if (!f) {
      *err = script + ": cannot write the batch script (is " + job.out + " writable?)";
      return false;
    }
  }
  chmod(script.c_str(), 0755);
  sandbox::ProcessSpec spec;
  spec.argv = sbatch_argv(job, script);
  spec.env = env;
  spec.limit_s = 120;  // sbatch retries an unreachable controller for a while, not forever
  sandbox::ProcessResult r;
  std::string perr;
  if (!sandbox::run_process(spec, &r, &perr)) {
    *err = "cannot run sbatch (" + perr +
           "): run `kforge sweep --slurm` where Slurm's commands are (a login node), or "
           "install them (Debian: slurm-client) with SLURM_CONF naming the cluster's "
           "slurm.conf";
    return false;
  }
  if (!r.ok()) {
    std::string said = r.output;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    *err = fmt::format(
        "sbatch refused the job ({}):\n{}\nfix the --sbatch options, or Slurm's configuration "
        "(SLURM_CONF, the controller), and run the same command again; the batch script is {}",
        r.timed_out ? "no answer in 120 s" : fmt::format("exit code {}", r.exit_code), said,
        script);
    return false;
  }
  return parse_job_id(r.output, job_id, err);
}

std::string gpus_to_make_visible() {
  if (!env_value("CUDA_VISIBLE_DEVICES").empty()) return "";
  return env_value("SLURM_JOB_GPUS");
}

std::string no_gpu_warning(sandbox::Backend backend) {
  if (backend != sandbox::Backend::cuda || env_value("SLURM_JOB_ID").empty()) return "";
  if (!env_value("SLURM_JOB_GPUS").empty() || !env_value("CUDA_VISIBLE_DEVICES").empty()) return "";
  return fmt::format(
      "kforge sweep: Slurm job {} was given no GPUs (no SLURM_JOB_GPUS or "
      "CUDA_VISIBLE_DEVICES), so its evals use every GPU of its node, other jobs' too; "
      "submit with --sbatch=--gpus=N (or your cluster's GPU option)",
      env_value("SLURM_JOB_ID"));
}

}  // namespace sweep
