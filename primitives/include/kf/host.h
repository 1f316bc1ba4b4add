// kf/host.h: helpers for host-backend candidates (plain C++ over the POSIX shared-memory
// heap, see <kf/kf.h>): a barrier across ranks that never needs a reset, bf16
// conversions, and the copy and sum loops of the expert host kernels. GPU candidates
// synchronize with <kf/signal.cuh> instead.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

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

// Copies `bytes` in steps of `step` bytes (the host templates' chunk knob: it changes the
// access pattern, never the result).
inline void chunked_copy(char* dst, const char* src, size_t bytes, size_t step) {
  for (size_t off = 0; off < bytes; off += step)
    std::memcpy(dst + off, src + off, bytes - off < step ? bytes - off : step);
}

// Element i of an fp32 or bf16 tensor, as float; and back.
inline float load(const void* p, size_t i, bool bf16) {
  return bf16 ? bf16_to_float(static_cast<const uint16_t*>(p)[i]) : static_cast<const float*>(p)[i];
}
inline void store(void* p, size_t i, float v, bool bf16) {
  if (bf16)
    static_cast<uint16_t*>(p)[i] = float_to_bf16(v);
  else
    static_cast<float*>(p)[i] = v;
}

// out[i] = sum over r of src[r][i] for i < n, in float and in rank order (the same bits on
// every rank), `chunk` elements at a time.
inline void sum_slots(void* out, const void* const* src, int world, size_t n, bool bf16,
                      size_t chunk) {
  for (size_t b = 0; b < n; b += chunk)
    for (size_t i = b; i < n && i < b + chunk; ++i) {
      float s = 0;
      for (int r = 0; r < world; ++r) s += load(src[r], i, bf16);
      store(out, i, s, bf16);
    }
}

}  // namespace kf::host
