// Fault (any problem): asymmetric collective allocation in kf_setup: rank 0 asks for
// 1 KiB, every other rank for 2 KiB. Verdict: setup_error naming the mismatched allocation.
#include <kf/kf.h>

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  void* p = comm.alloc(comm.rank == 0 ? 1024 : 2048);
  return p ? 0 : 1;
}

extern "C" int kf_run(kf::Comm&, kf::Tensors&) {
  return 0;
}
