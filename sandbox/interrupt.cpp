// sandbox/interrupt.cpp: see interrupt.h. The handler touches only lock-free atomics.
#include "interrupt.h"

#include <atomic>
#include <csignal>
#include <mutex>

namespace sandbox {

namespace {
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};

extern "C" void on_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  g_count.fetch_add(1);
}
}  // namespace

void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocking read returns EINTR and sees the request
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  });
}

int interrupt_signal() {
  return g_signal.load();
}
int interrupt_count() {
  return g_count.load();
}

void clear_interrupt() {
  g_signal.store(0);
  g_count.store(0);
}

void request_interrupt(int sig) {
  on_signal(sig);
}

}  // namespace sandbox
