// broadcast on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Pull style: after a barrier every rank copies the root's x into its own
// y; a second barrier keeps the root's input alive until everyone has read it.
#include <atomic>
#include <cstring>

#include <sched.h>

#include <kf/kf.h>

namespace {

uint32_t* g_arrived = nullptr;  // g_arrived[s]: the last barrier rank s has entered
uint32_t g_epoch = 0;           // barriers entered by this rank; never reset

// Every rank announces `epoch` in every peer's slot, then waits for all slots to reach it.
// `>=` (not `==`) because a fast peer may already have announced the next barrier.
void barrier(const kf::Comm& comm) {
  const uint32_t epoch = ++g_epoch;
  for (int r = 0; r < comm.world; ++r)
    std::atomic_ref<uint32_t>(comm.peer(g_arrived, r)[comm.rank]).store(epoch);
  for (int r = 0; r < comm.world; ++r)
    while (std::atomic_ref<uint32_t>(g_arrived[r]).load() < epoch) sched_yield();
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_arrived = comm.signals(kf::kMaxWorld);
  return g_arrived ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  barrier(comm);  // the root's x is ready
  std::memcpy(y.data, comm.peer(x.ptr<const float>(), root), y.bytes());
  barrier(comm);  // the root's x is not regenerated while a peer still reads it
  return 0;
}
