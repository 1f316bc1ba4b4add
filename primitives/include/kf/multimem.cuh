// kf/multimem.cuh: NVLink SHARP (NVLS) multimem operations on a multicast address.
//
// A multicast address maps one buffer of every rank at once; the NVSwitch executes the
// operation on all copies: ld_reduce reads every rank's element and returns the sum
// (one load instead of world loads), st writes every copy (one store instead of world),
// red adds into every copy. That cuts an all-reduce's NVLink traffic by about world.
//
// POLICY: multicast is OFF on the machines kforge runs on (NCCL_NVLS_ENABLE=0). These
// wrappers compile everywhere, but a kernel may execute them only on an address that
// came from a multicast object, and only when kf::multicast_allowed() is true. Creating
// multicast objects is the sandbox's business, never a candidate's: see
// primitives/docs/multimem.md. On a plain (unicast) pointer the behaviour is undefined.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace kf {

// Host: the device reports multicast support AND the environment allows NVLS
// (NCCL_NVLS_ENABLE set and not "0"). Attribute 132 is the driver's multicast-supported
// attribute; the runtime shares the driver's numbering. Any error counts as "no".
inline bool multicast_allowed(int device) {
  const char* env = std::getenv("NCCL_NVLS_ENABLE");
  if (env == nullptr || std::strcmp(env, "0") == 0 || env[0] == '\0') return false;
  int v = 0;
  if (cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(132), device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return v != 0;
}

// Four fp32 per operation (16 bytes), relaxed at system scope.
__device__ __forceinline__ float4 multimem_ld_reduce_add(const float4* mc) {
  float4 r;
  asm volatile("multimem.ld_reduce.relaxed.sys.global.add.v4.f32 {%0,%1,%2,%3}, [%4];"
               : "=f"(r.x), "=f"(r.y), "=f"(r.z), "=f"(r.w)
               : "l"(mc)
               : "memory");
  return r;
}
__device__ __forceinline__ void multimem_st(float4* mc, float4 v) {
  asm volatile("multimem.st.relaxed.sys.global.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(mc), "f"(v.x),
               "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}
__device__ __forceinline__ void multimem_red_add(float4* mc, float4 v) {
  asm volatile("multimem.red.relaxed.sys.global.add.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(mc),
               "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
               : "memory");
}
// Eight bf16 (four bf16x2 words) per operation; the switch sums in at least fp32 and
// rounds once (acc::f32).
__device__ __forceinline__ uint4 multimem_ld_reduce_add_bf16x8(const uint4* mc) {
  uint4 r;
  asm volatile("multimem.ld_reduce.relaxed.sys.global.add.acc::f32.v4.bf16x2 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(mc)
               : "memory");
  return r;
}
__device__ __forceinline__ void multimem_st_bf16x8(uint4* mc, uint4 v) {
  asm volatile("multimem.st.relaxed.sys.global.v4.bf16x2 [%0], {%1,%2,%3,%4};" ::"l"(mc), "r"(v.x),
               "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ void multimem_red_add_bf16x8(uint4* mc, uint4 v) {
  asm volatile("multimem.red.relaxed.sys.global.add.v4.bf16x2 [%0], {%1,%2,%3,%4};" ::"l"(mc),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
// A barrier word on a multicast address: one release add reaches every rank's copy
// (the PK signal_all); wait on the local copy with kf::wait_flag for world * epoch.
__device__ __forceinline__ void multimem_signal_add(uint32_t* mc, uint32_t v) {
  asm volatile("multimem.red.release.sys.global.add.u32 [%0], %1;" ::"l"(mc), "r"(v) : "memory");
}

}  // namespace kf
