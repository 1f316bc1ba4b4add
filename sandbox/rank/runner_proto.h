// sandbox/rank/runner_proto.h: what the judge (kforge-rank) and the runner
// (kforge-runner, the one process that loads the candidate) say to each other.
//
// Each rank is two processes. The judge holds MPI, NCCL, the heap, the input secret,
// the baseline, the checks, the timer of record and the reports; the runner holds the
// candidate and nothing else: no MPI, no NCCL, no secret, no writable file outside
// <dir>/scratch, no new socket. They talk over one SOCK_SEQPACKET socketpair (the
// runner's end is descriptor kRunnerFd), a message a datagram:
//
//   judge -> runner  Init (JSON, and on the host backend the peers' heap descriptors)
//   runner -> judge  Reply{kReady}: the heaps mapped, the process hardened
//   judge -> runner  Request{kPing} x 32 (calibration, before any candidate code exists
//                    in the runner), then Request{kLoad}: Reply{kDone} with rc 0, or 1
//                    and the load error
//   judge -> runner  Request{kSetup | kRun | kQuit}
//   runner -> judge  Reply{kBarrier} (comm.barrier: the judge runs MPI_Barrier and
//                    answers Request{kGo}), then Reply{kDone}; or Reply{kCrash} from the
//                    runner's signal handler just before it dies.
//
// Nothing the runner says is trusted beyond what the judge can check: a reply's time
// must fit inside the round trip the judge measured itself (runner_link.h), its outputs
// are read and compared by the judge, and a dead or silent runner is the candidate's
// crash or timeout.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "job_enums.h"
#include "kf/abi.h"

namespace sandbox::runner {

constexpr int kRunnerFd = 3;  // the runner's end of the socketpair

enum class Op : int32_t {
  kReady = 1,    // runner: set up (device_ok 0: why not, in text)
  kSetup = 2,    // judge: call kf_setup (bump_used: where the workspace's free part starts)
  kRun = 3,      // judge: call kf_run `calls` times, timed when `timed`
  kPing = 4,     // judge: an empty timed call, to calibrate the round trip
  kQuit = 5,     // judge: release the heaps and exit 0
  kGo = 6,       // judge: the barrier asked for is passed
  kBarrier = 7,  // runner: comm.barrier was called
  kDone = 8,     // runner: the call returned (rc, device_ok, ms, off_stream, bump)
  kCrash = 9,    // runner: a fatal signal (rc), and the crash note in text
  kLoad = 10,    // judge: load the candidate (dlopen: its constructors run)
};

struct Request {
  Op op = Op::kQuit;
  uint32_t seq = 0;
  int32_t calls = 1;
  int32_t timed = 0;
  uint64_t bump_used = 0;
  int32_t profile = 0;  // kRun: inside the NVTX range kf_profile (job.h `profile`)
  // kRun: the race pass's exit probe: the first read of a peer's input stalls this long
  // (runner/peer_stall.h).
  double stall_ms = 0;
};

struct Reply {
  Op op = Op::kDone;
  uint32_t seq = 0;  // the request's
  int32_t rc = 0;    // the entry point's return value
  int32_t device_ok = 1;
  double ms = 0;  // timed: the runner's events, over all `calls`
  int32_t off_stream = 0;
  int32_t exhausted = 0;  // kSetup: comm.alloc ran out of workspace
  uint64_t bump_used = 0;
  uint64_t asked = 0;   // the comm.alloc that did not fit
  double slack_ms = 0;  // kPing: the runner timer's off-stream slack (StreamTimer)
  char text[1024] = {};
};

// The runner's view of one tensor of its rank.
struct InitTensor {
  std::string name;
  int32_t dtype = 0;  // kf::DType
  std::vector<int64_t> shape;
  uint64_t offset = 0;
  bool output = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(InitTensor, name, dtype, shape, offset, output)

struct Init {
  Backend backend = Backend::cuda;
  int rank = 0, world = 1, local_rank = 0;
  bool emulated = false;
  uint64_t heap_bytes = 0;
  // cuda: every rank's cudaIpcMemHandle_t, hex; host: the descriptors come with the
  // message (SCM_RIGHTS), in rank order.
  std::vector<std::string> ipc_handles;
  std::vector<InitTensor> tensors;
  std::vector<std::pair<std::string, double>> params;
  uint64_t workspace_offset = 0, workspace_bytes = 0;
  std::string candidate_lib;
  std::string scratch;  // the only place the runner may write files
  double cpu_limit_s = 660;
  bool under_tool = false;  // job.h: /tmp writable and local sockets allowed
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Init, backend, rank, world, local_rank, emulated, heap_bytes,
                                   ipc_handles, tensors, params, workspace_offset, workspace_bytes,
                                   candidate_lib, scratch, cpu_limit_s, under_tool)

// One datagram from `fd` into buf. With spin_ms > 0 it polls that long before it sleeps
// in recv: a process woken from a long sleep is late by tens of microseconds (30-40 us
// measured after 1.4 ms on the 2-core host), noise in the round trip the judge checks
// claimed times against. Both ends poll on the GPU, where a core per process is spare.
inline ssize_t recv_datagram(int fd, void* buf, size_t size, double spin_ms) {
  ssize_t n = -1;
  if (spin_ms > 0) {
    auto t0 = std::chrono::steady_clock::now();
    auto spent = [&] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
          .count();
    };
    while ((n = recv(fd, buf, size, MSG_DONTWAIT)) < 0 && (errno == EAGAIN || errno == EINTR) &&
           spent() < spin_ms) {
    }
  }
  if (n < 0)
    while ((n = recv(fd, buf, size, 0)) < 0 && errno == EINTR) {
    }
  return n;
}

}  // namespace sandbox::runner
