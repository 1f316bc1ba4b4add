// kf/quant.cuh: block-scaled quantization to int8 and fp8 e4m3, for kernels that send
// compressed data (quantized gradients, fp8 activations) instead of fp32 or bf16.
//
// Exactness. A receiver can only reproduce the sender's reference bit for bit if every
// rounding is the one the reference does: the scale is max(amax, eps) / qmax as ONE
// correctly rounded fp32 division, and a code is x / scale as another (never
// x * (1 / scale), never fast-math: either flips a code by one now and then), rounded to
// nearest with ties to even (torch.round, rintf), then clamped. Everything here uses
// __fdiv_rn, so it stays IEEE even under --use_fast_math. Dequantizing is one fp32
// product, code * scale: the same bits on every rank that has the code and the scale.
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace kf {

// ---- int8, symmetric, absmax-scaled (codes -127..127; -128 is never produced) -----------
// scale = max(amax, eps) / 127, one fp32 division.
__device__ __forceinline__ float i8_scale(float amax, float eps = 1e-8f) {
  return __fdiv_rn(fmaxf(amax, eps), 127.0f);
}
// code = clamp(rne(x / scale), -127, 127). Clamping after rounding equals clamping before
// (the bounds are integers), and the clamped value converts to int exactly.
__device__ __forceinline__ int i8_code(float x, float scale) {
  return __float2int_rn(fminf(fmaxf(rintf(__fdiv_rn(x, scale)), -127.0f), 127.0f));
}
__device__ __forceinline__ float i8_value(int code, float scale) {
  return static_cast<float>(code) * scale;
}
// Four codes in one 32-bit word, element k in byte k (the memory order of int8[4]).
__device__ __forceinline__ uint32_t pack_i8x4(int c0, int c1, int c2, int c3) {
  return (static_cast<uint32_t>(c0) & 0xffu) | (static_cast<uint32_t>(c1) & 0xffu) << 8 |
         (static_cast<uint32_t>(c2) & 0xffu) << 16 | static_cast<uint32_t>(c3) << 24;
}
__device__ __forceinline__ int unpack_i8(uint32_t word, int k) {
  return static_cast<int>(static_cast<int8_t>(static_cast<uint8_t>(word >> (8 * k))));
}

// ---- fp8 e4m3 (OCP e4m3fn: largest finite 448, no infinities) ---------------------------
constexpr float kE4m3Max = 448.0f;
// scale = max(amax, eps) / 448, one fp32 division.
__device__ __forceinline__ float e4m3_scale(float amax, float eps = 1e-12f) {
  return __fdiv_rn(fmaxf(amax, eps), kE4m3Max);
}
// code = e4m3(x / scale): round to nearest even, saturated to +-448 (cvt.rn.satfinite).
__device__ __forceinline__ __nv_fp8_storage_t e4m3_code(float x, float scale) {
  return __nv_cvt_float_to_fp8(__fdiv_rn(x, scale), __NV_SATFINITE, __NV_E4M3);
}
__device__ __forceinline__ float e4m3_value(__nv_fp8_storage_t code, float scale) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3))) * scale;
}

// ---- amax of a quantization block spread over a group of lanes -------------------------
// Groups are aligned runs of `width` lanes (a power of two <= 32) of one warp; every lane
// gets its group's max. Every lane of the warp must call it (full-mask shuffles), with
// 0 for lanes that hold no element.
__device__ __forceinline__ float group_max(float v, int width) {
  for (int o = width >> 1; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
// Host and device: lanes per quantization block of `block` elements when each lane takes
// `per_lane` elements a step: the smallest power of two covering the block, at most 32.
__host__ __device__ __forceinline__ int group_lanes(int64_t block, int per_lane) {
  const int64_t steps = (block + per_lane - 1) / per_lane;
  int w = 1;
  while (w < 32 && w < steps) w <<= 1;
  return w;
}

}  // namespace kf
