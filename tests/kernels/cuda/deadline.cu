// Fault (any problem): a deadlock planted through kf's own wait. Every rank waits in
// slot 0 for a signal from its right-hand neighbour that nobody ever sends. With the
// debug deadline at 1 s, kf::wait prints which rank, slot and peer it waited on, then
// traps: the verdict is a crash that names them, within about a second, instead of a
// timeout after the call limit. (deadlock.cu is the same hang without kf: a timeout.)
#define KF_WAIT_TIMEOUT_NS 1000000000ull
#include <kf/kf.cuh>

namespace {

kf::SignalSet g_sig;
uint32_t g_epoch = 0;

__global__ void wait_for_neighbour(kf::SignalSet s, uint32_t epoch) {
  kf::wait(s, (s.rank + 1) % s.world, 0, epoch);
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_sig = kf::make_signals(comm, 1);
  return g_sig.local ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors&) {
  wait_for_neighbour<<<1, 1, 0, comm.stream()>>>(g_sig, ++g_epoch);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
