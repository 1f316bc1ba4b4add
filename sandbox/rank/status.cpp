// sandbox/rank/status.cpp: see status.h.
#include "status.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "fatal_signals.h"
#include "rank_status.h"

namespace sandbox::rank {

namespace {
std::string g_status_path, g_tmp_path;
char g_crash_path[4096];
// What the handler prints after "in ": two buffers and an index flipped after the new
// text is complete, so a signal arriving mid-update reads a whole (older) line.
char g_where[2][512];
volatile sig_atomic_t g_where_cur = 0;
char g_note[1024];
std::string g_known;
RankPhase g_phase = RankPhase::bootstrap;
long long g_since = 0;

void copy_trunc(char* dst, size_t cap, const std::string& s) {
  size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
  std::memcpy(dst, s.data(), n);
  dst[n] = 0;
}

const char* sig_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
  }
  return "signal";
}

// Async-signal-safe: only write(2), open(2), close(2) and local formatting.
void put(int fd, const char* s) {
  size_t n = std::strlen(s);
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void on_fatal(int sig) {
  char num[16];
  int v = sig, i = 15;
  num[i] = 0;
  do {
    num[--i] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && i > 0);
  int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  for (int out : {fd, 2}) {
    if (out < 0) continue;
    if (out == 2) put(out, "kforge-rank: ");
    put(out, "signal ");
    put(out, num + i);
    put(out, " (");
    put(out, sig_name(sig));
    put(out, ") in ");
    put(out, g_where[g_where_cur]);
    if (g_note[0]) {
      put(out, ": ");
      put(out, g_note);
    }
    put(out, "\n");
  }
  if (fd >= 0) close(fd);
  // SA_RESETHAND restored the default action: die of the same signal (the launcher
  // sees the real cause; no core: RLIMIT_CORE is 0).
  raise(sig);
}
}  // namespace

long long now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

bool status_init(const std::string& dir, int rank, std::string* err) {
  std::string sdir = dir + "/status";
  if (mkdir(sdir.c_str(), 0755) != 0 && errno != EEXIST) {
    *err = sdir + ": cannot create: " + std::strerror(errno);
    return false;
  }
  g_status_path = sdir + "/rank" + std::to_string(rank);
  g_tmp_path = g_status_path + ".tmp" + std::to_string(getpid());
  copy_trunc(g_crash_path, sizeof g_crash_path, g_status_path + ".crash");
  copy_trunc(g_where[0], sizeof g_where[0], "bootstrap");
  g_since = now_ms();
  return true;
}

void status_set(RankPhase phase, const std::string& detail, bool in_candidate, double limit_s,
                bool restart) {
  g_phase = phase;
  if (restart || g_since == 0) g_since = now_ms();
  int next = 1 - g_where_cur;
  copy_trunc(g_where[next], sizeof g_where[next],
             detail.empty() ? std::string(rank_phase_name(g_phase))
                            : rank_phase_name(g_phase) + (" " + detail));
  g_where_cur = next;
  if (g_status_path.empty()) return;
  nlohmann::json j = RankStatusLine{getpid(), g_phase, detail, in_candidate, g_since, limit_s};
  std::string line = j.dump() + "\n";
  int fd = open(g_tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;  // best effort: the watchdog then sees an older status
  put(fd, line.c_str());
  close(fd);
  std::rename(g_tmp_path.c_str(), g_status_path.c_str());
}

RankPhase status_phase() {
  return g_phase;
}

std::string status_where() {
  return g_where[g_where_cur];
}

void write_crash_file(const std::string& line) {
  int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  put(fd, (line + "\n").c_str());
  close(fd);
}

void install_crash_handlers() {
  on_fatal_signals(on_fatal);
}

void set_crash_note(const std::string& note) {
  copy_trunc(g_note, sizeof g_note, note);
}

void set_known_tensors(const std::string& known) {
  g_known = known;
}

void missing_tensor(const char* name) {
  std::string msg = std::string("kf::Tensors: no tensor named '") + (name ? name : "(null)") +
                    "' (tensors: " + g_known + ")";
  std::fprintf(stderr, "kforge-rank: %s\n", msg.c_str());
  set_crash_note(msg);
  std::abort();  // the SIGABRT handler writes the crash file with the note
}

}  // namespace sandbox::rank
