// kf/copy_engine.cuh: copy-engine (DMA) transfers between UVA pointers, host side.
//
// cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream) on a peer pointer
// (comm.peer, CUDA IPC underneath) runs on the GPU's copy engines: no SM is used, so a
// kernel on another stream keeps all SMs. Cost (PK paper, H100): the best bandwidth of
// all (368.82 GB/s at 1 GB, 82% of 450), but it needs chunks of >= 256 MB to get there
// and each call costs microseconds of launch: large messages only. Ordering: a copy
// knows nothing about the peers' state; put a kf::launch_barrier before (the peer has
// entered the call, its buffers are ready) and after (every peer's copies into this
// rank have finished) on the same stream.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace kf {

// One copy-engine transfer on `stream`.
inline cudaError_t ce_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
}

// The same in chunks of at most `chunk` bytes (chunk 0: one transfer): lets several
// streams or engines interleave, at a launch cost per chunk.
inline cudaError_t ce_copy_chunked(void* dst, const void* src, size_t bytes, size_t chunk,
                                   cudaStream_t stream) {
  if (chunk == 0) chunk = bytes;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  for (size_t off = 0; off < bytes; off += chunk) {
    const size_t len = bytes - off < chunk ? bytes - off : chunk;
    cudaError_t e = cudaMemcpyAsync(d + off, s + off, len, cudaMemcpyDeviceToDevice, stream);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace kf
