// bench/timing_kernels/honest_20us.cu: the forged-timer cases' kernel, honest: about
// 20 us of device work a call, then the all_reduce (tests/faults/cuda/common.cuh, pasted
// in by bench/timing_gpu.sh). Its time is what the forgers' claims are held against.
#include "../../tests/faults/cuda/common.cuh"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::busy_kernel<<<1, 32, 0, comm.stream()>>>(20000);
  return fault::correct_run(comm, t);
}
