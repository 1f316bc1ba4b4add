// sandbox/deadline.cpp: see deadline.h. One atomic, read from the poll loops of
// run_process and of the HTTP client, so it costs nothing to ask often.
#include "deadline.h"

#include <atomic>
#include <chrono>
#include <cstdint>

#include "interrupt.h"

namespace sandbox {

namespace {

using Clock = std::chrono::steady_clock;

// Nanoseconds on the steady clock; 0 when no deadline is set.
std::atomic<int64_t> g_deadline_ns{0};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

void set_deadline(double seconds_from_now) {
  int64_t at = now_ns() + static_cast<int64_t>(seconds_from_now * 1e9);
  g_deadline_ns.store(at == 0 ? 1 : at);
}

void clear_deadline() {
  g_deadline_ns.store(0);
}

bool deadline_passed() {
  int64_t d = g_deadline_ns.load();
  return d != 0 && now_ns() >= d;
}

double deadline_left_s() {
  int64_t d = g_deadline_ns.load();
  if (d == 0) return 1e18;
  return static_cast<double>(d - now_ns()) / 1e9;
}

bool stop_requested() {
  return interrupted() || deadline_passed();
}

}  // namespace sandbox
