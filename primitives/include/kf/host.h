// kf/host.h: helpers for host-backend candidates (plain C++ over the POSIX shared-memory
// heap, see <kf/kf.h>): a barrier across ranks that never needs a reset, and bf16
// conversions. GPU candidates synchronize with <kf/signal.cuh> instead.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include <sched.h>

#include "abi.h"

namespace kf::host {

// A counting barrier: one counter in rank 0's heap that only grows. The k-th wait (from
// 1) returns once the counter reaches k * world, so nothing is ever reset between
// kf_run calls. It spins with sched_yield: host ranks often outnumber the cores.
class Barrier {
 public:
  // In kf_setup (collective, like every comm.alloc). False when the workspace is full.
  bool setup(Comm& comm) {
    count_ = comm.signals(1);
    return count_ != nullptr;
  }
  void wait(const Comm& comm) {
    std::atomic_ref<uint32_t> count(*comm.peer(count_, 0));
    const uint32_t target = ++passed_ * static_cast<uint32_t>(comm.world);
    count.fetch_add(1);
    while (count.load() < target) sched_yield();
  }

 private:
  uint32_t* count_ = nullptr;
  uint32_t passed_ = 0;  // waits this rank has passed
};

inline float bf16_to_float(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Round to nearest, ties to even, as __float2bfloat16_rn does; NaN stays NaN.
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace kf::host
