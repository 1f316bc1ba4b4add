// sandbox/process_tree.cpp: the processes around a run, found through /proc: whether one
// is alive, every descendant of one, killing a whole tree, waiting for pids or for every
// process that names a run's directory to be gone (declared in process.h).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "process.h"

namespace sandbox {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

std::string read_proc_file(const std::string& path) {
  std::string out;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

bool process_alive(int pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  // A zombie still answers kill(pid, 0); it runs nothing, so it is not alive.
  std::string s = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  if (s.empty()) return kill(pid, 0) == 0;
  size_t rp = s.rfind(')');
  if (rp == std::string::npos || rp + 2 >= s.size()) return true;
  char state = s[rp + 2];
  return state != 'Z' && state != 'X';
}

std::vector<int> descendants(int pid) {
  // ppid of every process, then a walk down from pid.
  std::vector<std::pair<int, int>> pp;  // (pid, ppid)
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      int p = atoi(e->d_name);
      if (p <= 0) continue;
      std::string s = read_proc_file(std::string("/proc/") + e->d_name + "/stat");
      size_t rp = s.rfind(')');
      if (rp == std::string::npos) continue;
      char state = 0;
      int ppid = 0;
      if (sscanf(s.c_str() + rp + 1, " %c %d", &state, &ppid) == 2) pp.push_back({p, ppid});
    }
    closedir(d);
  }
  std::vector<int> out, frontier = {pid};
  while (!frontier.empty()) {
    int parent = frontier.back();
    frontier.pop_back();
    for (auto& [p, ppid] : pp)
      if (ppid == parent && std::find(out.begin(), out.end(), p) == out.end()) {
        out.push_back(p);
        frontier.push_back(p);
      }
  }
  return out;
}

std::vector<int> kill_tree(int pid) {
  std::vector<int> tree = descendants(pid);
  pid_t self_group = getpgrp();
  killpg(pid, SIGKILL);
  for (int p : tree) {
    kill(p, SIGKILL);
    pid_t g = getpgid(p);
    if (g == p && g != self_group) killpg(g, SIGKILL);
  }
  tree.push_back(pid);
  return tree;
}

bool wait_gone(const std::vector<int>& pids, double timeout_s) {
  auto t0 = Clock::now();
  for (;;) {
    bool any = false;
    for (int p : pids) any = any || process_alive(p);
    if (!any) return true;
    if (since(t0) > timeout_s) return false;
    usleep(5000);
  }
}

std::vector<int> processes_naming(const std::string& needle) {
  std::vector<int> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    int pid = atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    std::string cmd = read_proc_file(std::string("/proc/") + e->d_name + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(needle) != std::string::npos && process_alive(pid)) out.push_back(pid);
  }
  closedir(d);
  return out;
}

bool wait_none_naming(const std::string& needle, double timeout_s) {
  auto t0 = Clock::now();
  while (!processes_naming(needle).empty()) {
    if (since(t0) > timeout_s) return false;
    usleep(10000);
  }
  return true;
}

}  // namespace sandbox
