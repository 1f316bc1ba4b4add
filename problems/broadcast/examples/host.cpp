// A simple correct host candidate for broadcast, push style: once every rank has entered
// the call, the root writes its x into every rank's y; the others only wait.
#include <atomic>
#include <cstring>

#include <sched.h>

#include <kf/kf.h>

namespace {

// A counting barrier: one counter in rank 0's heap that only grows. Barrier number k
// (from 1) is passed when it reaches k * world, so it never needs a reset.
uint32_t* g_count = nullptr;
uint32_t g_passed = 0;

void sync_all(const kf::Comm& comm) {
  std::atomic_ref<uint32_t> count(*comm.peer(g_count, 0));
  const uint32_t target = ++g_passed * static_cast<uint32_t>(comm.world);
  count.fetch_add(1);
  while (count.load() < target) sched_yield();
}

}  // namespace

extern "C" int kf_setup(kf::Comm& comm, kf::Tensors&) {
  g_count = comm.signals(1);
  return g_count ? 0 : 1;
}

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  const kf::Tensor& x = t["x"];
  kf::Tensor& y = t["y"];
  const int root = static_cast<int>(t.iparam("root", 0));
  sync_all(comm);  // every peer's y is ready for this call's data
  if (comm.rank == root)
    for (int r = 0; r < comm.world; ++r)
      std::memcpy(comm.peer(y.ptr<char>(), r), x.data, x.bytes());
  sync_all(comm);  // my y has arrived
  return 0;
}
