// Fault (problem all_gather): push style with flags that are set to 1 and never reset (no
// epoch). Call 0 is right; from call 1 on both waits pass at once, so with the staggered
// start an early rank returns before late peers pushed their slots (still poison).
// Verdict: unstable (call 0 right, a later call wrong); never correct.
#include <kf/kf.h>
#include <sched.h>

#include <atomic>
#include <cstring>

namespace {

uint32_t* g_entered = nullptr;  // g_entered[s] = 1 once rank s has entered (ever)
uint32_t* g_pushed = nullptr;   // g_pushed[s] = 1 once rank s has pushed (ever)

// The bug: "flag == 1" is true forever after the first call.
void raise_and_wait(const kf::Comm& comm, uint32_t* flags) {
  for (int r = 0; r < comm.world; ++r)
    std::atomic_ref<uint32_t>(comm.peer(flags, r)[comm.rank]).store(1);
  for (int r = 0; r < comm.world; ++r)
    while (std::atomic_ref<uint32_t>(flags[r]).load() != 1) sched_yield();
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_entered = comm.signals(kf::kMaxWorld);
  g_pushed = comm.signals(kf::kMaxWorld);
  return g_entered && g_pushed ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  raise_and_wait(comm, g_entered);  // "every peer's y is ready" (only true in call 0)
  for (int r = 0; r < comm.world; ++r)
    std::memcpy(comm.peer(y.ptr<char>(), r) + static_cast<size_t>(comm.rank) * x.bytes(), x.data,
                x.bytes());
  raise_and_wait(comm, g_pushed);  // "every slot of my y arrived" (only true in call 0)
  return 0;
}
