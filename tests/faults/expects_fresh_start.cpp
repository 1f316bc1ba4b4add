// fault: all_reduce world=1,2 expect=correct args=--size,full
// A correct candidate that counts on what a launch of its own would give it: its process
// fresh (no static state from an earlier job) and comm.alloc's memory zeroed. The small
// and full checks share one launch, so both must hold for the second as for the first:
// kf_setup fails if it ran before in this process or if a large buffer it allocates is
// not zero (kf_run fills it, so the small job leaves it dirty where the full job's
// workspace lies).
#include <cstring>

#include "common.h"

namespace {
int g_setups = 0;
constexpr size_t kBytes = 16u << 20;
unsigned char* g_buf = nullptr;
}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  if (g_setups++ > 0) return 2;  // this process already served a job
  if (fault::setup(comm) != 0) return 1;
  g_buf = static_cast<unsigned char*>(comm.alloc(kBytes));
  if (!g_buf) return 1;
  for (size_t i = 0; i < kBytes; ++i)
    if (g_buf[i] != 0) return 3;  // left over from an earlier job
  return 0;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  fault::correct_run(comm, t);
  if (g_buf[0] == 0) std::memset(g_buf, 0x5a, kBytes);
  return 0;
}
