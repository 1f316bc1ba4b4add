// sandbox/launch.cpp: mpirun under process.h, the watchdog as its poll callback, and
// the collection of what the ranks left behind.
#include "launch.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "confine.h"
#include "launch_parts.h"
#include "process.h"
#include "rank_status.h"
#include "secrets.h"
#include "text.h"
#include "watchdog.h"

extern char** environ;

namespace fs = std::filesystem;

namespace sandbox {

namespace {

void set_env(std::vector<std::string>* env, const std::string& kv) {
  std::string name = kv.substr(0, kv.find('='));
  for (auto& e : *env)
    if (e.compare(0, name.size() + 1, name + "=") == 0) {
      e = kv;
      return;
    }
  env->push_back(kv);
}

}  // namespace

uint64_t LaunchOptions::default_job_memory() {
  if (const char* e = std::getenv("KFORGE_MEMORY_MIB"); e && atol(e) > 0)
    return static_cast<uint64_t>(atol(e)) << 20;
  return uint64_t{16} << 30;
}

std::vector<std::string> scrubbed_env(const std::string& scratch, bool allow_multicast,
                                      const std::vector<std::string>& extra_env) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string name = kv.substr(0, eq);
    bool pass = name == "PATH" || name == "LD_LIBRARY_PATH" || name == "LANG" || name == "LC_ALL" ||
                name == "CUDA_VISIBLE_DEVICES" || name.rfind("OMPI_MCA_", 0) == 0 ||
                name.rfind("NCCL_", 0) == 0;
    if (pass && !looks_secret(name)) env.push_back(kv);
  }
  if (std::none_of(env.begin(), env.end(), [](auto& e) { return e.rfind("PATH=", 0) == 0; }))
    env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  if (geteuid() == 0) {
    set_env(&env, "OMPI_ALLOW_RUN_AS_ROOT=1");
    set_env(&env, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
  }
  set_env(&env, "HOME=" + scratch);
  set_env(&env, "TMPDIR=" + scratch);
  set_env(&env, "CUDA_CACHE_PATH=" + scratch + "/.nv");
  // Load every module at start-up: with lazy loading (CUDA's default) the first launch
  // of a kernel can wait on a context-wide lock while a peer's spinning kernel holds
  // the GPU, and module loading would otherwise land inside the first timed calls.
  set_env(&env, "CUDA_MODULE_LOADING=EAGER");
  if (!allow_multicast) {
    set_env(&env, "NCCL_NVLS_ENABLE=0");
    set_env(&env, "TORCH_SYMM_MEM_DISABLE_MULTICAST=1");
    set_env(&env, "NVSHMEM_DISABLE_NVLS=1");
  }
  for (auto& kv : extra_env)
    if (kv.find('=') != std::string::npos) set_env(&env, kv);
  return env;
}

std::vector<std::string> mpirun_argv(const std::vector<Job>& jobs, const LaunchOptions& opt) {
  std::vector<std::string> a = {opt.mpirun, "--oversubscribe", "--bind-to", "none"};
  for (auto& [k, v] : opt.mca) {
    a.push_back("--mca");
    a.push_back(k);
    a.push_back(v);
  }
  a.insert(a.end(), opt.extra_args.begin(), opt.extra_args.end());
  // Under a wrapper for some ranks only: one MPMD segment per run of ranks started alike
  // (`-np 1 ncu ... kforge-rank J : -np 1 kforge-rank J`); MPI numbers them in order.
  const int world = jobs.at(0).settings.world;
  const auto& w = opt.wrapped_ranks;
  auto wrapped = [&](int r) {
    return !opt.rank_wrapper.empty() && (w.empty() || std::find(w.begin(), w.end(), r) != w.end());
  };
  for (int r = 0; r < world;) {
    int n = 1;
    while (r + n < world && wrapped(r + n) == wrapped(r)) ++n;
    if (r > 0) a.push_back(":");
    a.insert(a.end(), {"-np", std::to_string(n)});
    if (wrapped(r)) a.insert(a.end(), opt.rank_wrapper.begin(), opt.rank_wrapper.end());
    a.push_back(opt.rank_binary);
    a.insert(a.end(), opt.rank_args.begin(), opt.rank_args.end());
    for (const Job& job : jobs) a.push_back(job.dir + "/job.json");
    r += n;
  }
  return a;
}

namespace detail {

bool prepare_jobs(const std::vector<Job>& jobs, const LaunchOptions& opt, std::string* err) {
  if (jobs.empty()) {
    *err = "run_jobs: no job to run";
    return false;
  }
  if (opt.rank_binary.empty() || access(opt.rank_binary.c_str(), X_OK) != 0) {
    *err = "run_job: the rank program '" + opt.rank_binary + "' is missing or not executable";
    return false;
  }
  for (const Job& job : jobs) {
    if (job.dir.empty() || job.dir[0] != '/') {
      *err = "run_job: job.dir must be an absolute path (got '" + job.dir + "')";
      return false;
    }
    if (job.settings.world < 1 || job.settings.world != jobs[0].settings.world) {
      *err = "run_job: world must be at least 1, and the same for every job of a launch";
      return false;
    }
    std::error_code ec;
    fs::create_directories(job.dir + "/status", ec);
    fs::create_directories(job.dir + "/scratch", ec);
    if (ec) {
      *err = job.dir + ": cannot create the run directory: " + ec.message();
      return false;
    }
    if (!write_json_file(job.dir + "/job.json", nlohmann::json(job), err)) return false;
  }
  return true;
}

namespace {

// Reads a JSON report of type T into *out, or says in notes why it could not.
template <typename T>
void read_report(const std::string& path, std::optional<T>* out, std::vector<std::string>* notes) {
  if (!fs::exists(path)) return;
  nlohmann::json j;
  std::string e;
  if (!read_json_file(path, &j, &e)) {
    notes->push_back(e);
    return;
  }
  try {
    *out = j.get<T>();
  } catch (const std::exception& ex) {
    notes->push_back(path + ": unreadable: " + ex.what());
  }
}

}  // namespace

void collect(const Job& job, RunResult* out, std::vector<int>* pids) {
  for (int r = 0; r < job.settings.world; ++r) {
    RankStatus s = read_rank_status(job.dir, r);
    out->statuses.push_back(s);
    if (s.present && s.pid > 0) pids->push_back(s.pid);
    std::string crash = trim(read_text(job.dir + "/status/rank" + std::to_string(r) + ".crash"));
    if (!crash.empty()) out->crashes.push_back({r, crash});
    std::optional<RankReport> rep;
    read_report(job.dir + "/rank" + std::to_string(r) + ".json", &rep, &out->notes);
    out->reports.push_back(rep);
  }
  read_report(job.dir + "/result.json", &out->result, &out->notes);
}

void collect_exits(const std::string& dir, int world, RunResult* out) {
  for (int r = 0; r < world; ++r) {
    std::optional<RankExit> e;
    read_report(dir + "/status/rank" + std::to_string(r) + ".exit", &e, &out->notes);
    out->exits.push_back(e);
  }
}

// Where OpenMPI's shared-memory segments go: where the launch's cleanup finds them, as a
// rank killed by the watchdog cannot unlink its own and /dev/shm would fill up over a
// sweep. In bubblewrap's sandbox /dev/shm is the job's own and goes with it. Returns the
// name prefix to clean up ("" for none).
std::string place_mpi_segments(const Job& job, bool private_shm, LaunchOptions* o) {
  std::string shm_name =
      job.shm_prefix.empty() || private_shm
          ? ""
          : (job.shm_prefix[0] == '/' ? job.shm_prefix.substr(1) : job.shm_prefix);
  std::error_code ec;
  if (private_shm) {
    o->mca.push_back({"btl_vader_backing_directory", "/dev/shm"});
  } else if (shm_name.size() >= 6 && fs::is_directory("/dev/shm")) {
    std::string backing = "/dev/shm/" + shm_name + "-mpi";
    if (fs::create_directories(backing, ec) || fs::is_directory(backing))
      o->mca.push_back({"btl_vader_backing_directory", backing});
  } else {
    o->mca.push_back({"btl_vader_backing_directory", job.dir + "/scratch"});
  }
  return shm_name;
}

void wait_killed(const ProcessResult& pr, RunResult* last) {
  if (!wait_gone(pr.killed_pids, 15.0))
    last->notes.push_back(
        "a rank was still exiting 15 s after the job was killed (its GPU context being torn down)");
}

void record_end(const ProcessResult& pr, const ConfinedRun& cr, RunResult* last) {
  if (cr.leftovers_killed > 0)
    last->notes.push_back(
        fmt::format("{} process(es) of the job were still running after it and were killed",
                    cr.leftovers_killed));
  last->oom_killed = cr.oom_killed;
  last->exit_code = pr.exit_code;
  last->signal = pr.signal;
  last->killed_by_watchdog = pr.killed;
  last->kill_reason = pr.kill_reason;
}

// No rank may outlive its launch, nor its POSIX shared memory (the host backend's heaps
// and OpenMPI's segments: a killed rank cannot unlink them).
void clean_up(const std::vector<int>& pids, const std::string& binary_name,
              const std::string& shm_name, std::vector<std::string>* notes) {
  for (int p : pids)
    if (is_rank_process(p, binary_name)) {
      kill_rank(p);
      notes->push_back(fmt::format("rank pid {} was still alive after the job and was killed", p));
    }
  if (!wait_gone(pids, 15.0))
    notes->push_back(
        "a rank was still exiting 15 s after the job ended (its GPU context being torn down)");
  std::error_code ec;
  if (shm_name.size() >= 6 && fs::is_directory("/dev/shm")) {
    std::vector<fs::path> mine;
    for (auto& e : fs::directory_iterator("/dev/shm", ec))
      if (e.path().filename().string().rfind(shm_name, 0) == 0) mine.push_back(e.path());
    for (auto& p : mine) fs::remove_all(p, ec);
  }
}

bool launch_spec(const std::vector<Job>& jobs, const LaunchOptions& o, Watchdog* dog,
                 ProcessSpec* spec, Confined* confined, std::string* err, const std::string& root) {
  const Job& job = jobs[0];
  spec->argv = mpirun_argv(jobs, o);
  spec->env = scrubbed_env(job.dir + "/scratch", o.allow_multicast, o.extra_env);
  spec->cwd = job.dir + "/scratch";
  spec->limit_s = dog->total_s > 0 ? dog->total_s + o.slack_s : 0;
  spec->output_cap = o.output_cap;
  spec->poll = [dog](std::string* reason) { return (*dog)(reason); };
  Confinement jail;
  // kforge-rank starts kforge-runner from its own folder (rank/runner_link.cpp).
  std::string runner_binary =
      o.rank_binary.substr(0, o.rank_binary.rfind('/') + 1) + "kforge-runner";
  jail.read_only = {o.rank_binary, runner_binary};
  jail.read_only.insert(jail.read_only.end(), o.read_only.begin(), o.read_only.end());
  if (!root.empty()) {
    // A warm set (warm.h): every eval's folder, libraries included, is beneath its root,
    // bound whole, since the later evals' folders are made after the jail is.
    jail.writable.push_back(root);
  } else {
    if (!job.build_gate.empty())  // the libraries are not built yet: kforge fills their folder
      jail.read_only.push_back(fs::path(job.build_gate).parent_path().string());
    else
      jail.read_only.insert(jail.read_only.end(), {job.candidate_lib, job.baseline_lib});
    for (const Job& j : jobs) jail.writable.push_back(j.dir);
  }
  jail.gpu = job.settings.backend == Backend::cuda;
  jail.memory_bytes = o.memory_bytes;
  jail.max_pids = o.max_pids;
  return confined->prepare(jail, spec, err);
}

void gather(const std::vector<Job>& jobs, const RunResult& last, const LaunchOptions& opt,
            const std::string& isolation, const std::string& exits_dir, std::vector<RunResult>* out,
            std::vector<int>* pids) {
  // Every job a rank reached has results; those before the last passed on every rank
  // (the ranks go on only then), so they ended as a launch of their own would have: 0.
  std::vector<std::string> dirs;
  for (const Job& j : jobs) dirs.push_back(j.dir);
  int reached = 0;
  for (int r = 0; r < jobs[0].settings.world; ++r)
    reached = std::max(reached, current_job(dirs, r));
  for (int k = 0; k <= reached; ++k) {
    RunResult rr = k == reached ? last : RunResult{};
    if (k < reached) rr.exit_code = 0;
    rr.memory_bytes = opt.memory_bytes;
    rr.isolation = isolation;
    collect(jobs[k], &rr, pids);
    // The launch's ranks record their ends in one folder; they are the reached job's.
    if (k == reached && !exits_dir.empty()) collect_exits(exits_dir, jobs[0].settings.world, &rr);
    out->push_back(std::move(rr));
  }
}

}  // namespace detail

using namespace detail;

bool run_jobs(const std::vector<Job>& jobs, const LaunchOptions& opt, std::vector<RunResult>* out,
              std::string* err) {
  out->clear();
  if (!prepare_jobs(jobs, opt, err)) return false;
  // Under bubblewrap the launch has its own PID namespace (its status files name pids of
  // that namespace, not ours) and its own /dev/shm.
  const bool private_shm = isolation_mode() == Isolation::bwrap;
  RunResult last;  // what mpirun did goes to the last job that started
  Watchdog dog;
  for (const Job& j : jobs) dog.dirs.push_back(j.dir);
  dog.world = jobs[0].settings.world;
  dog.bootstrap_s = jobs[0].settings.limits.bootstrap_s;
  for (const Job& j : jobs) dog.total_s += j.settings.limits.total_s;
  if (!jobs[0].build_gate.empty()) dog.total_s += jobs[0].settings.limits.build_s;
  dog.binary_name = fs::path(opt.rank_binary).filename().string();
  dog.kill_ranks = !private_shm;
  if (opt.linger_s > 0) dog.linger_s = opt.linger_s;
  dog.out = &last;
  LaunchOptions o = opt;
  const std::string shm_name = place_mpi_segments(jobs[0], private_shm, &o);
  ProcessSpec spec;
  Confined confined;
  if (!launch_spec(jobs, o, &dog, &spec, &confined, err, "")) return false;
  ProcessResult pr;
  if (!run_process(spec, &pr, err)) return false;
  wait_killed(pr, &last);
  ConfinedRun cr = confined.finish();
  record_end(pr, cr, &last);
  last.output = pr.output;
  last.seconds = pr.seconds;
  if (pr.timed_out && last.stuck.empty()) {
    last.limit_s = dog.total_s;
    last.kill_reason = fmt::format("mpirun ran past the job's total limit of {} s", dog.total_s);
  }

  std::vector<int> pids;
  gather(jobs, last, opt, cr.how, jobs[0].dir, out, &pids);
  // Confined, the pids in the status files are the sandbox's own, not ours: its PID
  // namespace and cgroup ended every process in it.
  if (private_shm) pids.clear();
  clean_up(pids, dog.binary_name, shm_name, &out->back().notes);
  return true;
}

bool run_job(const Job& job, const LaunchOptions& opt, RunResult* out, std::string* err) {
  std::vector<RunResult> results;
  if (!run_jobs({job}, opt, &results, err)) return false;
  *out = std::move(results.at(0));
  return true;
}

}  // namespace sandbox
