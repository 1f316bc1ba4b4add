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
#include "process.h"
#include "secrets.h"

extern char** environ;

namespace fs = std::filesystem;

namespace sandbox {

namespace {

using Clock = std::chrono::steady_clock;

long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void set_env(std::vector<std::string>* env, const std::string& kv) {
  std::string name = kv.substr(0, kv.find('='));
  for (auto& e : *env)
    if (e.compare(0, name.size() + 1, name + "=") == 0) {
      e = kv;
      return;
    }
  env->push_back(kv);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// True when pid is (still) one of our ranks: a pid from a status file may have been
// reused by now, and killing a stranger is worse than missing a corpse.
bool is_rank_process(int pid, const std::string& binary_name) {
  if (!process_alive(pid)) return false;
  std::string cmd = read_text("/proc/" + std::to_string(pid) + "/cmdline");
  if (cmd.empty()) return false;
  return cmd.find(binary_name) != std::string::npos;
}

void kill_rank(int pid) {
  kill(pid, SIGKILL);
  if (getpgid(pid) == pid && pid != getpgrp()) killpg(pid, SIGKILL);
}

std::string describe(const RankStatus& s) {
  std::string w = s.phase;
  if (!s.detail.empty())
    w += " (" + s.detail + (s.in_candidate ? ", inside kf_run" : "") + ")";
  else if (s.in_candidate)
    w += " (inside kf_run)";
  return w;
}

}  // namespace

// How long after every rank said "done" the job may take to end (MPI_Finalize, mpirun's
// teardown: well under a second when nothing holds it).
constexpr double kLingerS = 3.0;

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

std::vector<std::string> mpirun_argv(const Job& job, const LaunchOptions& opt) {
  std::vector<std::string> a = {opt.mpirun,        "-np",       std::to_string(job.world),
                                "--oversubscribe", "--bind-to", "none"};
  for (auto& [k, v] : opt.mca) {
    a.push_back("--mca");
    a.push_back(k);
    a.push_back(v);
  }
  a.insert(a.end(), opt.extra_args.begin(), opt.extra_args.end());
  a.push_back(opt.rank_binary);
  a.push_back(job.dir + "/job.json");
  return a;
}

RankStatus read_rank_status(const std::string& dir, int rank) {
  RankStatus s;
  s.rank = rank;
  std::string text = read_text(dir + "/status/rank" + std::to_string(rank));
  if (text.empty()) return s;
  try {
    auto j = nlohmann::json::parse(text);
    s.pid = j.value("pid", 0);
    s.phase = j.value("phase", "");
    s.detail = j.value("detail", "");
    s.in_candidate = j.value("in_candidate", false);
    s.since_ms = j.value("since_ms", 0ll);
    s.limit_s = j.value("limit_s", 0.0);
    s.seconds = s.since_ms > 0 ? (now_ms() - s.since_ms) / 1000.0 : 0;
    s.present = true;
  } catch (const std::exception&) {
    // A file being written is replaced atomically; anything else is not ours to parse.
  }
  return s;
}

bool run_job(const Job& job, const LaunchOptions& opt, RunResult* out, std::string* err) {
  *out = RunResult{};
  if (job.dir.empty() || job.dir[0] != '/') {
    *err = "run_job: job.dir must be an absolute path (got '" + job.dir + "')";
    return false;
  }
  if (opt.rank_binary.empty() || access(opt.rank_binary.c_str(), X_OK) != 0) {
    *err = "run_job: the rank program '" + opt.rank_binary + "' is missing or not executable";
    return false;
  }
  if (job.world < 1) {
    *err = "run_job: world must be at least 1";
    return false;
  }
  std::error_code ec;
  std::string scratch = job.dir + "/scratch";
  fs::create_directories(job.dir + "/status", ec);
  fs::create_directories(scratch, ec);
  if (ec) {
    *err = job.dir + ": cannot create the run directory: " + ec.message();
    return false;
  }
  if (!write_json_file(job.dir + "/job.json", nlohmann::json(job), err)) return false;

  const std::string binary_name = fs::path(opt.rank_binary).filename().string();
  // Under bubblewrap the job has its own PID namespace (its status files name pids of
  // that namespace, not ours) and its own /dev/shm.
  const bool private_shm = isolation_mode() == "bwrap";
  const Limits& lim = job.limits;
  auto t0 = Clock::now();
  auto last_check = t0 - std::chrono::seconds(1);

  // The watchdog: every ~100 ms, every rank's status file.
  auto watchdog = [&](std::string* reason) -> bool {
    auto now = Clock::now();
    if (now - last_check < std::chrono::milliseconds(100)) return false;
    last_check = now;
    double elapsed = std::chrono::duration<double>(now - t0).count();
    long long nms = now_ms();
    std::vector<RankStatus> all, stuck;
    for (int r = 0; r < job.world; ++r) all.push_back(read_rank_status(job.dir, r));
    double limit = 0;
    std::string why;
    // All done, yet still running: something the candidate started keeps mpirun waiting.
    long long done_since = 0;
    for (auto& s : all)
      done_since =
          s.present && s.phase == "done" && done_since >= 0 ? std::max(done_since, s.since_ms) : -1;
    if (done_since > 0 && nms - done_since > 1000 * kLingerS) {
      out->lingering = true;
      *reason = fmt::format(
          "every rank had finished {:.1f} s before, but a process the candidate started "
          "kept the job open; it was killed",
          (nms - done_since) / 1000.0);
      return true;
    }
    for (auto& s : all) {
      if (s.present && s.limit_s > 0 &&
          nms > s.since_ms + static_cast<long long>(1000 * s.limit_s)) {
        stuck.push_back(s);
        limit = std::max(limit, s.limit_s);
      } else if (!s.present && elapsed > lim.bootstrap_s) {
        RankStatus m = s;
        m.phase = "bootstrap";
        m.detail = "no status file";
        m.seconds = elapsed;
        stuck.push_back(m);
        limit = std::max(limit, lim.bootstrap_s);
      }
    }
    if (!stuck.empty()) {
      std::vector<std::string> parts;
      for (auto& s : stuck)
        parts.push_back(fmt::format(
            "rank {} stuck in {} for {:.1f} s (limit {} s)", s.rank, describe(s), s.seconds,
            s.phase == "bootstrap" && !s.present ? lim.bootstrap_s : s.limit_s));
      for (size_t i = 0; i < parts.size(); ++i) why += (i ? "; " : "") + parts[i];
    } else if (lim.total_s > 0 && elapsed > lim.total_s) {
      for (auto& s : all)
        if (s.present) stuck.push_back(s);
      limit = lim.total_s;
      why = fmt::format("the job ran past its total limit of {} s", lim.total_s);
    } else {
      return false;
    }
    out->stuck = stuck;
    out->limit_s = limit;
    for (auto& s : all)
      if (!private_shm && s.present && s.pid > 0 && is_rank_process(s.pid, binary_name))
        kill_rank(s.pid);
    *reason = why;
    return true;
  };

  // OpenMPI's shared-memory segments go where the job's cleanup finds them: a rank killed
  // by the watchdog cannot unlink its own, and /dev/shm would fill up over a sweep. In
  // bubblewrap's sandbox /dev/shm is the job's own and goes with it.
  std::string shm_name =
      job.shm_prefix.empty() || private_shm
          ? ""
          : (job.shm_prefix[0] == '/' ? job.shm_prefix.substr(1) : job.shm_prefix);
  LaunchOptions o = opt;
  if (private_shm) {
    o.mca.push_back({"btl_vader_backing_directory", "/dev/shm"});
  } else if (shm_name.size() >= 6 && fs::is_directory("/dev/shm")) {
    std::string backing = "/dev/shm/" + shm_name + "-mpi";
    if (fs::create_directories(backing, ec) || fs::is_directory(backing))
      o.mca.push_back({"btl_vader_backing_directory", backing});
  } else {
    o.mca.push_back({"btl_vader_backing_directory", scratch});
  }

  ProcessSpec spec;
  spec.argv = mpirun_argv(job, o);
  spec.env = scrubbed_env(scratch, opt.allow_multicast, opt.extra_env);
  spec.cwd = scratch;
  spec.limit_s = lim.total_s > 0 ? lim.total_s + opt.slack_s : 0;
  spec.output_cap = opt.output_cap;
  spec.poll = watchdog;
  Confinement jail;
  // kforge-rank starts kforge-runner from its own folder (rank/runner_link.cpp).
  std::string runner_binary =
      opt.rank_binary.substr(0, opt.rank_binary.rfind('/') + 1) + "kforge-runner";
  jail.read_only = {opt.rank_binary, runner_binary, job.candidate_lib};
  if (!job.baseline_lib.empty()) jail.read_only.push_back(job.baseline_lib);
  jail.writable = {job.dir};
  jail.gpu = job.backend == "cuda";
  jail.memory_bytes = opt.memory_bytes;
  jail.max_pids = opt.max_pids;
  Confined confined;
  if (!confined.prepare(jail, &spec, err)) return false;
  ProcessResult pr;
  if (!run_process(spec, &pr, err)) return false;
  // A rank killed inside a kernel exits only once the driver has torn its GPU context
  // down, which can take seconds; the next job should not start beside it.
  if (!wait_gone(pr.killed_pids, 15.0))
    out->notes.push_back(
        "a rank was still exiting 15 s after the job was killed (its GPU context being torn down)");
  ConfinedRun cr = confined.finish();
  out->oom_killed = cr.oom_killed;
  out->memory_bytes = opt.memory_bytes;
  out->isolation = cr.how;
  if (cr.leftovers_killed > 0)
    out->notes.push_back(
        fmt::format("{} process(es) of the job were still running after it and were killed",
                    cr.leftovers_killed));

  out->exit_code = pr.exit_code;
  out->signal = pr.signal;
  out->output = pr.output;
  out->killed_by_watchdog = pr.killed;
  out->kill_reason = pr.kill_reason;
  if (pr.timed_out && out->stuck.empty()) {
    out->limit_s = lim.total_s;
    out->kill_reason = fmt::format("mpirun ran past the job's total limit of {} s", lim.total_s);
  }

  // What the ranks left.
  std::vector<int> pids;
  for (int r = 0; r < job.world; ++r) {
    RankStatus s = read_rank_status(job.dir, r);
    out->statuses.push_back(s);
    if (s.present && s.pid > 0) pids.push_back(s.pid);
    std::string crash = trim(read_text(job.dir + "/status/rank" + std::to_string(r) + ".crash"));
    if (!crash.empty()) out->crashes.push_back({r, crash});
    std::string rp = job.dir + "/rank" + std::to_string(r) + ".json";
    std::optional<RankReport> rep;
    if (fs::exists(rp)) {
      nlohmann::json j;
      std::string e;
      if (read_json_file(rp, &j, &e)) {
        try {
          rep = j.get<RankReport>();
        } catch (const std::exception& ex) {
          out->notes.push_back(rp + ": unreadable report: " + ex.what());
        }
      } else {
        out->notes.push_back(e);
      }
    }
    out->reports.push_back(rep);
  }
  if (fs::exists(job.dir + "/result.json")) {
    nlohmann::json j;
    std::string e;
    if (read_json_file(job.dir + "/result.json", &j, &e)) {
      try {
        out->result = j.get<RunReport>();
      } catch (const std::exception& ex) {
        out->notes.push_back("result.json: unreadable: " + std::string(ex.what()));
      }
    }
  }

  // No rank may outlive its job. (Confined, the pids in the status files are the
  // sandbox's own, not ours: its PID namespace and cgroup ended every process in it.)
  if (private_shm) pids.clear();
  for (int p : pids)
    if (is_rank_process(p, binary_name)) {
      kill_rank(p);
      out->notes.push_back(
          fmt::format("rank pid {} was still alive after the job and was killed", p));
    }
  if (!wait_gone(pids, 15.0))
    out->notes.push_back(
        "a rank was still exiting 15 s after the job ended (its GPU context being torn down)");

  // POSIX shared memory of the host backend: a killed rank cannot unlink its segments.
  // (and OpenMPI's segments, in their directory beside them).
  if (shm_name.size() >= 6 && fs::is_directory("/dev/shm")) {
    std::vector<fs::path> mine;
    for (auto& e : fs::directory_iterator("/dev/shm", ec))
      if (e.path().filename().string().rfind(shm_name, 0) == 0) mine.push_back(e.path());
    for (auto& p : mine) fs::remove_all(p, ec);
  }
  out->seconds = pr.seconds;
  return true;
}

}  // namespace sandbox
