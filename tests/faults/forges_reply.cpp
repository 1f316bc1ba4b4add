// fault: all_reduce world=1 expect=crash timed says=did_not_ask
// Answers for its own process: in a timed call it finds the judge's request on its
// stack (op kRun, sequence number, one call, timed), sends the judge a reply of its own
// on the runner's descriptor claiming 0.001 ms, before its work is done, then does the
// work. The judge takes the early reply, but the runner's real one then arrives out of
// sequence: the candidate is reported as having said what it was not asked.
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include "common.h"

namespace {
// rank/runner_proto.h's Reply, as a candidate would copy it from the public source.
struct Reply {
  int32_t op;
  uint32_t seq;
  int32_t rc, device_ok;
  double ms;
  int32_t off_stream, exhausted;
  uint64_t bump_used, asked;
  double slack_ms;
  char text[1024];
};

// The request being served: {3 (kRun), seq, 1 call, 1 timed} somewhere above this frame,
// below the top of the stack.
uint32_t find_seq() {
  const char* p = static_cast<const char*>(__builtin_frame_address(0));
  pthread_attr_t a;
  void* base = nullptr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &a) != 0) return 0;
  pthread_attr_getstack(&a, &base, &size);
  pthread_attr_destroy(&a);
  const char* top = static_cast<const char*>(base) + size;
  for (size_t off = 0; p + off + 16 <= top && off < (256u << 10); off += 4) {
    int32_t w[4];
    std::memcpy(w, p + off, sizeof w);
    if (w[0] == 3 && w[1] > 0 && w[1] < 1000000 && w[2] == 1 && w[3] == 1)
      return static_cast<uint32_t>(w[1]);
  }
  return 0;
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  if (uint32_t seq = find_seq()) {
    Reply r{};
    r.op = 8;  // kDone
    r.seq = seq;
    r.device_ok = 1;
    r.ms = 0.001;
    send(3, &r, sizeof r, MSG_NOSIGNAL);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return fault::correct_run(comm, t);
}
