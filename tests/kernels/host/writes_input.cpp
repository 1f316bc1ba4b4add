// Fault (problem all_reduce, fp32): a correct all_reduce that then zeroes its own x (after
// the final barrier, so every peer has already read it): outputs right, input modified.
// Verdict: mismatch on tensor x with the input-modified flag set (inputs must not change).
#include <kf/kf.h>
#include <sched.h>

#include <atomic>
#include <cstring>

namespace {

uint32_t* g_arrived = nullptr;  // g_arrived[s]: the last barrier rank s has entered
uint32_t g_epoch = 0;

void barrier(const kf::Comm& comm) {
  const uint32_t epoch = ++g_epoch;
  for (int r = 0; r < comm.world; ++r)
    std::atomic_ref<uint32_t>(comm.peer(g_arrived, r)[comm.rank]).store(epoch);
  for (int r = 0; r < comm.world; ++r)
    while (std::atomic_ref<uint32_t>(g_arrived[r]).load() < epoch) sched_yield();
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_arrived = comm.signals(kf::kMaxWorld);
  return g_arrived ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  kf::Tensor& x = t["x"];
  float* y = t["y"].ptr<float>();
  const int64_t n = t["y"].numel;
  barrier(comm);
  for (int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int r = 0; r < comm.world; ++r) s += comm.peer(x.ptr<const float>(), r)[i];
    y[i] = s;
  }
  barrier(comm);
  std::memset(x.data, 0, x.bytes());  // the bug: an input is scratch space here
  return 0;
}
