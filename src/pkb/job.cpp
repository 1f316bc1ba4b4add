// pkb/job.cpp: see job.h.
#include "pkb/job.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pkb/text.h"
#include "sandbox/enum_names.h"
#include "sandbox/launch.h"
#include "sandbox/sha256.h"
#include "suite/paths.h"

namespace pkb {

namespace fs = std::filesystem;

namespace {

// python as the job finds it: a name looked up on the environment's PATH, else as given.
std::string on_path(const std::string& python, const std::vector<std::string>& env) {
  if (python.find('/') != std::string::npos) return python;
  std::string dirs;
  for (auto& kv : env)
    if (kv.rfind("PATH=", 0) == 0) dirs = kv.substr(5);
  std::stringstream ss(dirs);
  for (std::string d; std::getline(ss, d, ':');)
    if (!d.empty() && fs::exists(d + "/" + python)) return d + "/" + python;
  return python;
}

}  // namespace

std::vector<std::string> python_dirs(const std::string& python,
                                     const std::vector<std::string>& env) {
  std::string path = on_path(python, env);
  std::vector<std::string> out;
  std::error_code ec;
  if (path.find('/') == std::string::npos) return out;
  fs::path bin = fs::absolute(path, ec).parent_path();
  // .../venv/bin/python3: the venv; anything else (a stand-in): only its own folder.
  bool prefix = bin.filename() == "bin" && bin.parent_path() != bin.root_path();
  out.push_back(prefix ? bin.parent_path().string() : bin.string());
  fs::path py = fs::canonical(bin / "python3", ec).parent_path();
  if (!ec && py.filename() == "bin" && py.parent_path() != py.root_path())
    out.push_back(py.parent_path().string());
  return out;
}

namespace {

// What to say of a python that did not start the driver: a script (a pyenv shim, a
// wrapper) runs programs the sandbox may not show, where the interpreter itself would run.
std::string script_hint(const std::string& path) {
  std::ifstream f(path);
  char head[2] = {0, 0};
  if (!f.read(head, 2) || head[0] != '#' || head[1] != '!') return "";
  return path +
         " is a script, such as a pyenv shim, and runs programs the sandbox does not show: give "
         "the interpreter itself, the path that python3 -c 'import sys; print(sys.executable)' "
         "prints. ";
}

// What the driver's --probe says: ok, or environment (this setup cannot run a PKB job).
enum class ProbeStatus { ok, environment };

}  // namespace
}  // namespace pkb

template <>
struct sandbox::EnumNames<pkb::ProbeStatus> {
  static constexpr const char* what = "probe status";
  static constexpr const char* names[] = {"ok", "environment"};
};

namespace pkb {
namespace {

KF_ENUM_JSON(ProbeStatus)

// What the driver's --probe writes as <work_dir>/probe.json.
struct ProbeReport {
  ProbeStatus status = ProbeStatus::ok;
  std::string message, python;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ProbeReport, status, message, python)

}  // namespace

std::vector<std::string> job_argv(const EvalSpec& s) {
  std::string python = s.python;
  if (python.empty()) python = std::getenv("KF_PYTHON") ? std::getenv("KF_PYTHON") : "";
  if (python.empty()) python = "python3";
  std::string driver =
      s.driver.empty() ? suite::default_paths().source_root + "/sandbox/pkb/pkb_eval.py" : s.driver;
  std::string cache =
      s.ext_cache.empty() ? suite::default_paths().cache_dir + "/pkb_ext" : s.ext_cache;
  return {python,          driver,
          "--nproc",       std::to_string(s.world),
          "--pkb",         s.checkout,
          "--problem-id",  std::to_string(s.problem.number),
          "--reference",   s.problem.reference,
          "--solution",    s.solution,
          "--out",         s.work_dir,
          "--trials",      std::to_string(s.trials),
          "--warmup",      std::to_string(s.warmup),
          "--warmup-s",    fmt::format("{}", s.warmup_s),
          "--iters",       std::to_string(s.iters),
          "--atol",        fmt::format("{}", s.atol),
          "--rtol",        fmt::format("{}", s.rtol),
          "--dtype",       s.dtype,
          "--timed-check", s.timed_check,
          "--ext-cache",   cache};
}

bool run_job(const EvalSpec& spec, const std::vector<std::string>& extra,
             sandbox::ProcessResult* pr, sandbox::ConfinedRun* cr, std::string* err) {
  std::error_code ec;
  std::string scratch = spec.work_dir + "/scratch";
  fs::create_directories(scratch, ec);
  sandbox::ProcessSpec ps;
  ps.argv = job_argv(spec);
  std::string cache = ps.argv.back();
  fs::create_directories(cache, ec);
  ps.argv.insert(ps.argv.end(), extra.begin(), extra.end());
  ps.env = sandbox::scrubbed_env(scratch, false, {});
  ps.cwd = scratch;
  ps.limit_s = spec.timeout_s;
  sandbox::Confined confined;
  if (spec.confine && sandbox::isolation_mode() == sandbox::Isolation::bwrap) {
    sandbox::Confinement jail;
    // The driver's folder: it imports its neighbours (pkb_timing.py, pkb_tamper.py, ...).
    jail.read_only = {spec.checkout, fs::absolute(spec.solution).string(),
                      fs::absolute(ps.argv[1]).parent_path().string()};
    for (auto& dir : python_dirs(ps.argv[0], ps.env)) jail.read_only.push_back(dir);
    // Of the extension cache, only this source's own folder (the driver keys it the same
    // way): a candidate cannot plant a library under another source's key.
    const std::string own =
        cache + "/" + sandbox::sha256_hex(read_text(spec.solution)).substr(0, 16);
    fs::create_directories(own, ec);
    jail.writable = {spec.work_dir, own};
    jail.gpu = true;
    if (!confined.prepare(jail, &ps, err)) return false;
  }
  if (!sandbox::run_process(ps, pr, err)) return false;
  sandbox::wait_gone(pr->killed_pids, 15.0);
  *cr = confined.finish();
  return true;
}

bool probe_setup(const EvalSpec& spec, std::string* why, std::string* err) {
  EvalSpec p = spec;
  p.work_dir = spec.work_dir + "/probe";
  p.timeout_s = std::min(spec.timeout_s, 120.0);
  std::error_code ec;
  fs::create_directories(p.work_dir, ec);
  sandbox::ProcessResult pr;
  sandbox::ConfinedRun cr;
  if (!run_job(p, {"--probe"}, &pr, &cr, err)) return false;
  nlohmann::json j = nlohmann::json::parse(read_text(p.work_dir + "/probe.json"), nullptr, false);
  ProbeReport r;
  bool read = false;
  if (j.is_object()) {
    try {
      r = j.get<ProbeReport>();
      read = true;
    } catch (const std::exception&) {  // not the driver's: a missing key, an unknown status
    }
  }
  if (!read) {
    std::string python = on_path(job_argv(p)[0], sandbox::scrubbed_env("/", false, {}));
    std::string how = pr.timed_out ? fmt::format("no answer in {:.0f} s", p.timeout_s)
                      : pr.signal  ? sandbox::signal_name(pr.signal)
                                   : fmt::format("exit {}", pr.exit_code);
    *why = fmt::format(
        "the job's python, {}, did not start kforge's PKB driver (it ended with {}). {}Give "
        "--python or KF_PYTHON a python3 whose torch is built for CUDA. Its output: {}",
        python, how, script_hint(python), tail(pr.output, 600));
  } else if (r.status == ProbeStatus::environment) {
    *why = fmt::format(
        "this setup cannot run a PKB job: {} (its python: {}). A PKB job needs a python3 whose "
        "torch is built for CUDA (--python or KF_PYTHON) and a GPU for each rank",
        r.message, r.python);
  } else {
    why->clear();
  }
  return true;
}

}  // namespace pkb
