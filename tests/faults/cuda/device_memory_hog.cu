// fault: all_reduce world=1 expect=correct
// Takes every byte of device memory it can get in kf_setup and keeps it: its own calls
// are still right, and the next eval gets the memory back with the process.
#include <vector>

#include "common.cuh"

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  for (size_t chunk = size_t(1) << 30; chunk >= (size_t(1) << 20);) {
    void* p = nullptr;
    if (cudaMalloc(&p, chunk) == cudaSuccess) continue;
    cudaGetLastError();
    chunk /= 2;
  }
  return fault::setup(comm);
}
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  return fault::correct_run(comm, t);
}
