// sandbox/watchdog.cpp: see watchdog.h.
#include "watchdog.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "process.h"

namespace sandbox {

namespace {

std::string describe(const RankStatus& s) {
  std::string w = rank_phase_name(s.phase);
  if (!s.detail.empty())
    w += " (" + s.detail + (s.in_candidate ? ", inside kf_run" : "") + ")";
  else if (s.in_candidate)
    w += " (inside kf_run)";
  return w;
}

}  // namespace

int current_job(const std::vector<std::string>& dirs, int r) {
  for (int k = static_cast<int>(dirs.size()) - 1; k >= 0; --k)
    if (access((dirs[k] + "/status/rank" + std::to_string(r)).c_str(), F_OK) == 0) return k;
  return -1;
}

bool is_rank_process(int pid, const std::string& binary_name) {
  if (!process_alive(pid)) return false;
  const std::string cmd = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
  return !cmd.empty() && cmd.find(binary_name) != std::string::npos;
}

void kill_rank(int pid) {
  kill(pid, SIGKILL);
  if (getpgid(pid) == pid && pid != getpgrp()) killpg(pid, SIGKILL);
}

bool Watchdog::operator()(std::string* reason) {
  auto now = std::chrono::steady_clock::now();
  if (now - last_check < std::chrono::milliseconds(100)) return false;
  last_check = now;
  const double elapsed = std::chrono::duration<double>(now - t0).count();
  const long long nms = wall_clock_ms();
  std::vector<RankStatus> all, stuck;
  for (int r = 0; r < world; ++r) {
    const int k = current_job(dirs, r);
    RankStatus none;
    none.rank = r;
    all.push_back(k < 0 ? none : read_rank_status(dirs[k], r));
  }
  // All done, yet still running: something the candidate started keeps mpirun waiting.
  long long done_since = 0;
  for (auto& s : all)
    done_since = s.present && s.phase == RankPhase::done && done_since >= 0
                     ? std::max(done_since, s.since_ms)
                     : -1;
  if (done_since > 0 && nms - done_since > 1000 * linger_s) {
    out->lingering = true;
    *reason = fmt::format(
        "every rank had finished {:.1f} s before, but a process the candidate started "
        "kept the job open; it was killed",
        (nms - done_since) / 1000.0);
    return true;
  }
  double limit = 0;
  for (auto& s : all) {
    if (s.present && s.limit_s > 0 && nms > s.since_ms + static_cast<long long>(1000 * s.limit_s)) {
      stuck.push_back(s);
      limit = std::max(limit, s.limit_s);
    } else if (!s.present && elapsed > bootstrap_s) {
      RankStatus m = s;
      m.phase = RankPhase::bootstrap;
      m.detail = "no status file";
      m.seconds = elapsed;
      stuck.push_back(m);
      limit = std::max(limit, bootstrap_s);
    }
  }
  std::string why;
  if (!stuck.empty()) {
    for (size_t i = 0; i < stuck.size(); ++i)
      why += fmt::format("{}rank {} stuck in {} for {:.1f} s (limit {} s)", i ? "; " : "",
                         stuck[i].rank, describe(stuck[i]), stuck[i].seconds,
                         stuck[i].present ? stuck[i].limit_s : bootstrap_s);
  } else if (total_s > 0 && elapsed > total_s) {
    for (auto& s : all)
      if (s.present) stuck.push_back(s);
    limit = total_s;
    why = fmt::format("the job ran past its total limit of {} s", total_s);
  } else {
    return false;
  }
  out->stuck = stuck;
  out->limit_s = limit;
  for (auto& s : all)
    if (kill_ranks && s.present && s.pid > 0 && is_rank_process(s.pid, binary_name))
      kill_rank(s.pid);
  *reason = why;
  return true;
}

}  // namespace sandbox
