// all_to_all on the host backend: the baseline's semantics in plain C++ over the
// symmetric heap. Pull style: after a barrier rank r copies chunk r of every peer s's x
// into chunk s of its own y; a second barrier keeps peers' inputs alive until read.
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
  const size_t n = static_cast<size_t>(x.numel) / static_cast<size_t>(comm.world);
  const size_t mine = static_cast<size_t>(comm.rank) * n;
  barrier(comm);  // every rank's x is ready
  for (int s = 0; s < comm.world; ++s)
    std::memcpy(y.ptr<float>() + static_cast<size_t>(s) * n,
                comm.peer(x.ptr<const float>(), s) + mine, n * sizeof(float));
  barrier(comm);  // nobody has x regenerated while a peer still reads it
  return 0;
}
