// sandbox/runner/peer_stall.h: the host runner's slow reader for the race pass's exit
// probe (rank/check.cpp). A kernel whose rank returns while a peer still reads its
// inputs is right whenever the peers read at the same pace, wrong on real hardware under
// load. The probe makes one rank fast and the others slow: the judge of the fast rank
// overwrites its inputs with poison the moment its call returns, and here, in a slow
// rank's runner, the peers' input pages are mapped PROT_NONE for the call: the first read
// of one faults, the handler sleeps `stall_ms` (the fast rank returns and is poisoned
// meanwhile), opens every page again and lets the read go on. A kernel without an exit
// wait then reads poison; one with it keeps the fast rank inside the call until the slow
// ones are done. The workspace (flags, barriers) stays open: a stall there would only
// make the slow rank enter late.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "runner_proto.h"

namespace sandbox::runner {

class PeerStall {
 public:
  // The pages of every peer's input tensors (`bases[r]`: rank r's heap as mapped here),
  // less any page the workspace shares.
  void set_ranges(const Init& in, const std::vector<char*>& bases) {
    const long page = sysconf(_SC_PAGESIZE);
    auto down = [&](uint64_t x) { return x / page * page; };
    auto up = [&](uint64_t x) { return (x + page - 1) / page * page; };
    std::vector<uint64_t> starts;
    for (const InitTensor& t : in.tensors) starts.push_back(t.offset);
    starts.push_back(in.workspace_offset);
    for (const InitTensor& t : in.tensors) {
      if (t.output) continue;
      uint64_t next = in.workspace_offset;
      for (uint64_t s : starts)
        if (s > t.offset) next = std::min(next, s);
      uint64_t a = down(t.offset), b = std::min(up(next), down(in.workspace_offset));
      if (a >= b) continue;
      for (int r = 0; r < static_cast<int>(bases.size()); ++r)
        if (r != in.rank) ranges_.push_back({bases[r] + a, b - a});
    }
  }

  // Closes the pages for one call; the first read of one stalls `ms`.
  void arm(double ms) {
    if (ranges_.empty()) return;
    install();
    stall_ns_ = static_cast<long>(ms * 1e6);
    done_.store(false);
    armed_.store(true);
    for (auto& [p, n] : ranges_) mprotect(p, n, PROT_NONE);
  }

  // After the call: every page open again (a call that never read a peer's input).
  void disarm() {
    if (armed_.exchange(false)) open_all();
    done_.store(true);
  }

  static PeerStall& get() {
    static PeerStall s;
    return s;
  }

 private:
  void open_all() {
    for (auto& [p, n] : ranges_) mprotect(p, n, PROT_READ | PROT_WRITE);
  }
  bool ours(const void* a) const {
    const char* x = static_cast<const char*>(a);
    for (auto& [p, n] : ranges_)
      if (x >= p && x < p + n) return true;
    return false;
  }
  // SIGSEGV and SIGBUS go here first; what is not a closed page is the crash handler's
  // (on_fatal_signals), reached by restoring it and raising again.
  void install() {
    if (installed_) return;
    installed_ = true;
    struct sigaction sa {};
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &prev_segv_);
    sigaction(SIGBUS, &sa, &prev_bus_);
  }
  static void on_fault(int sig, siginfo_t* si, void*) {
    PeerStall& s = get();
    if (s.ours(si->si_addr)) {
      if (s.armed_.exchange(false)) {
        timespec ts{s.stall_ns_ / 1000000000L, s.stall_ns_ % 1000000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
        s.open_all();
        s.done_.store(true);
      } else {
        timespec ts{0, 100000};
        while (!s.done_.load()) nanosleep(&ts, nullptr);
      }
      return;  // the read runs again, on an open page
    }
    sigaction(sig, sig == SIGBUS ? &s.prev_bus_ : &s.prev_segv_, nullptr);
    raise(sig);
  }

  std::vector<std::pair<char*, size_t>> ranges_;
  std::atomic<bool> armed_{false}, done_{true};
  long stall_ns_ = 0;
  bool installed_ = false;
  struct sigaction prev_segv_ = {};
  struct sigaction prev_bus_ = {};
};

}  // namespace sandbox::runner
