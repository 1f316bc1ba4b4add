// tests/rank_process.h: finding a rank's process from outside its sandbox, for tests that
// do to a rank what the OOM killer or a stray kill -9 would.
#pragma once

#include <filesystem>
#include <sstream>
#include <string>

#include "sandbox/process.h"

// The pid, as this process sees it, of world rank `rank`'s kforge-rank whose command line
// names `dir`: the child of the process mpirun started (rank/reaper.h). 0 when none.
inline int rank_process(const std::string& dir, int rank) {
  auto has = [](const std::string& s, const std::string& sub) {
    return s.find(sub) != std::string::npos;
  };
  auto proc = [](const std::string& pid, const char* file) {
    return sandbox::read_proc_file("/proc/" + pid + "/" + file);
  };
  auto comm = [&](const std::string& pid) { return proc(pid, "comm"); };
  for (auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (comm(pid) != "kforge-rank\n" || !has(proc(pid, "cmdline"), dir)) continue;
    std::string stat = proc(pid, "stat");  // "pid (comm) state ppid ..."; "" once it exited
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    std::string state, ppid;
    rest >> state >> ppid;
    std::string env = proc(pid, "environ");
    if (comm(ppid) == "kforge-rank\n" &&
        has(env, std::string("OMPI_COMM_WORLD_RANK=") + std::to_string(rank) + '\0'))
      return std::stoi(pid);
  }
  return 0;
}
