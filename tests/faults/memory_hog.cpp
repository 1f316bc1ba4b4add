// fault: all_reduce world=2 expect=crash env=KFORGE_MEMORY_MIB=512
// Rank 0 touches 4 GiB of host memory in its first call, against a job limit of 512 MiB:
// the job's cgroup ends it as "out of memory" (where no cgroup can be made, RLIMIT_AS
// makes malloc fail and it returns 7: a crash too). The machine is never short.
#include <cstdlib>
#include <cstring>

#include "common.h"

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  if (comm.rank == 0)
    for (int i = 0; i < 64; ++i) {
      char* p = static_cast<char*>(std::malloc(size_t(64) << 20));
      if (!p) return 7;
      std::memset(p, 1, size_t(64) << 20);
    }
  return fault::correct_run(comm, t);
}
