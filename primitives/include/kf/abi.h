// kf/abi.h: the candidate ABI, shared by every candidate, baseline and the sandbox.
//
// A candidate is one source file compiled into a shared library that exports
//   extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t);   // optional, untimed
//   extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t);     // timed
// Both return 0 on success; any other value is reported as a failure of that call.
//
// This header is plain C++ (no CUDA headers) so that host-backend candidates, the
// sandbox and the oracles compile it with g++. GPU code includes <kf/kf.cuh>, which adds
// the CUDA-typed accessors on top. Every struct here is plain data laid out the same on
// both sides of the dlopen boundary: the library needs no symbol from kforge-rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define KF_HD __host__ __device__ __forceinline__
#else
#define KF_HD inline
#endif

namespace kf {

// The largest world a Comm can describe (ParallelKittens handles up to 72 local ranks;
// 64 keeps a kernel-parameter struct of peer pointers at 512 bytes).
constexpr int kMaxWorld = 64;
constexpr int kMaxDims = 8;

// Element types. The numbering is part of the ABI: append, never reorder.
enum class DType : int32_t {
  f32 = 0,
  f16 = 1,
  bf16 = 2,
  f64 = 3,
  i32 = 4,
  i64 = 5,
  u8 = 6,
  e4m3 = 7,  // fp8 e4m3fn (no infinities; 0x7f/0xff are NaN)
  e5m2 = 8,  // fp8 e5m2
};

KF_HD size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32:
      return 4;
    case DType::f16:
      return 2;
    case DType::bf16:
      return 2;
    case DType::f64:
      return 8;
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
    case DType::u8:
      return 1;
    case DType::e4m3:
      return 1;
    case DType::e5m2:
      return 1;
  }
  return 0;
}

// One tensor of the problem, living in the symmetric heap: every rank has its copy at
// the same offset, so comm.peer(t.data, r) is rank r's copy. Shapes may differ by rank;
// the heap slot is sized for the largest rank's shape.
struct Tensor {
  const char* name;
  DType dtype;
  int32_t ndim;
  int64_t shape[kMaxDims];
  int64_t numel;
  void* data;
  int32_t is_output;  // 1: written by kf_run; 0: an input, which kf_run must not modify

  template <class T>
  T* ptr() const {
    return static_cast<T*>(data);
  }
  size_t bytes() const { return static_cast<size_t>(numel) * dtype_size(dtype); }
};

// A scalar argument of the problem (a gather dimension, a top-k, a size parameter).
struct Param {
  const char* name;
  double value;
};

struct Tensors {
  int32_t count;
  Tensor* items;
  int32_t param_count;
  Param* params;

  // The tensor called `name`, or nullptr.
  Tensor* find(const char* name) const {
    for (int32_t i = 0; i < count; ++i)
      if (std::strcmp(items[i].name, name) == 0) return &items[i];
    return nullptr;
  }
  // The tensor called `name`. A missing name is a bug in the candidate: the sandbox
  // reports it as a crash naming the tensor (see kf_abort_missing below).
  Tensor& operator[](const char* name) const {
    Tensor* t = find(name);
    if (!t) missing(name);
    return *t;
  }
  // The scalar `name` (every numeric problem parameter is passed), or `fallback`.
  double param(const char* name, double fallback = 0) const {
    for (int32_t i = 0; i < param_count; ++i)
      if (std::strcmp(params[i].name, name) == 0) return params[i].value;
    return fallback;
  }
  int64_t iparam(const char* name, int64_t fallback = 0) const {
    return static_cast<int64_t>(param(name, static_cast<double>(fallback)));
  }

  // Filled in by the sandbox: prints the name and aborts the rank.
  void (*missing_fn)(const char* name);
  [[noreturn]] void missing(const char* name) const {
    missing_fn(name);
    __builtin_trap();
  }
};

// Services the sandbox gives a candidate. They are function pointers so that the
// candidate library has no undefined symbol into kforge-rank.
struct CommOps {
  void* ctx;
  // Collective, setup only: every rank must make the same calls in the same order.
  // Returns this rank's copy of a zeroed symmetric buffer of `bytes` (256-byte
  // aligned), or nullptr when the workspace is exhausted.
  void* (*alloc)(void* ctx, size_t bytes);
  // Host-side barrier across all ranks. Setup only: kf_run must not block on the host.
  void (*barrier)(void* ctx);
};

// The candidate's view of the job: who it is, where its peers' memory is, its stream.
struct Comm {
  int32_t rank;
  int32_t world;
  int32_t local_rank;
  int32_t device;          // CUDA device ordinal; -1 on the host backend
  int32_t emulated;        // 1 when several ranks share one device (times mean nothing)
  void* stream_;           // cudaStream_t on the GPU; nullptr on the host backend
  char* bases[kMaxWorld];  // bases[r]: rank r's symmetric heap, mapped in this process
  size_t heap_bytes;
  CommOps ops;
  void* nccl_;  // ncclComm_t, for baselines only (nullptr for candidates)

#if defined(__CUDACC__)
  // The stream kf_run must enqueue its work on (the sandbox times this stream).
  cudaStream_t stream() const {
    return static_cast<cudaStream_t>(stream_);
  }
#else
  void* stream() const {
    return stream_;
  }
#endif
  // Rank r's copy of the symmetric buffer p (which must point into this rank's heap).
  template <class T>
  T* peer(T* p, int r) const {
    const char* c = reinterpret_cast<const char*>(p);
    size_t off = static_cast<size_t>(c - bases[rank]);
    return reinterpret_cast<T*>(bases[r] + off);
  }
  // Collective symmetric allocation (setup only). See CommOps::alloc.
  void* alloc(size_t bytes) {
    return ops.alloc(ops.ctx, bytes);
  }
  template <class T>
  T* alloc_array(size_t n) {
    return static_cast<T*>(alloc(n * sizeof(T)));
  }
  // `n` zeroed 32-bit signal words, symmetric across ranks (setup only).
  uint32_t* signals(size_t n) {
    return alloc_array<uint32_t>(n);
  }
  void barrier() {
    ops.barrier(ops.ctx);
  }
  bool in_heap(const void* p) const {
    const char* c = static_cast<const char*>(p);
    return c >= bases[rank] && c < bases[rank] + heap_bytes;
  }
};

// Peer pointers of one symmetric buffer, by value: pass it to a kernel as an argument.
template <class T>
struct Peers {
  T* ptr[kMaxWorld];
  KF_HD T* operator[](int r) const { return ptr[r]; }
};

template <class T>
Peers<T> peers(const Comm& comm, T* local) {
  Peers<T> p{};
  for (int r = 0; r < comm.world; ++r) p.ptr[r] = comm.peer(local, r);
  return p;
}

}  // namespace kf

// The entry points a candidate defines (declared here so that a typo in a signature is
// a compile error rather than a load error).
extern "C" int kf_setup(kf::Comm& comm, kf::Tensors& t);
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t);
