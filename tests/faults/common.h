// tests/faults/common.h: what the fault candidates share: a correct pull-style host
// all_reduce (fp32) whose waits each fault can leave out or break. Each fault file
// includes this and defines its own kf_setup and kf_run from the pieces.
#pragma once

#include <kf/kf.h>
#include <sched.h>

#include <atomic>
#include <cstdint>

namespace fault {

inline uint32_t* g_arrived = nullptr;  // g_arrived[s]: the last barrier rank s entered
inline uint32_t g_epoch = 0;

inline int setup(kf::Comm& comm) {
  g_arrived = comm.signals(kf::kMaxWorld);
  return g_arrived ? 0 : 1;
}

// Every rank has reached this point of this call (epochs only grow: never reset).
inline void barrier(const kf::Comm& comm) {
  const uint32_t epoch = ++g_epoch;
  for (int r = 0; r < comm.world; ++r)
    std::atomic_ref<uint32_t>(comm.peer(g_arrived, r)[comm.rank]).store(epoch);
  for (int r = 0; r < comm.world; ++r)
    while (std::atomic_ref<uint32_t>(g_arrived[r]).load() < epoch) sched_yield();
}

// y = the sum of every rank's x, read straight from the peers.
inline void sum_peers(const kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  float* y = t["y"].ptr<float>();
  for (int64_t i = 0; i < x.numel; ++i) {
    float s = 0;
    for (int r = 0; r < comm.world; ++r) s += comm.peer(x.ptr<const float>(), r)[i];
    y[i] = s;
  }
}

// The whole correct call.
inline int correct_run(kf::Comm& comm, kf::Tensors& t) {
  barrier(comm);  // every peer's x holds this call's inputs
  sum_peers(comm, t);
  barrier(comm);  // nobody regenerates its x while a peer still reads it
  return 0;
}

}  // namespace fault

#define KF_FAULT_SETUP                                    \
  extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) { \
    return fault::setup(comm);                            \
  }
