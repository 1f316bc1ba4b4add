// fault: all_reduce world=2 expect=mismatch
// Its own x only: every element wrong on every rank.
#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::barrier(comm);
  const kf::Tensor& x = t["x"];
  for (int64_t i = 0; i < x.numel; ++i) t["y"].ptr<float>()[i] = x.ptr<const float>()[i];
  fault::barrier(comm);
  return 0;
}
