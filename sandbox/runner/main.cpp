// sandbox/runner/main.cpp: kforge-runner <local_rank> <cuda|host> <judge pid>, the
// candidate's process, started by its rank's judge (rank/runner_link.h) before the judge
// has anything worth hiding. It maps the heaps, gives up what a kernel never needs
// (files outside <dir>/scratch, sockets, processes, signals to others), loads the
// candidate, then calls it when the judge says so (rank/runner_proto.h). It holds no
// secret, no expected output, no report and no status file, so there is nothing here
// for a candidate to forge but its own replies, which the judge checks.
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>

#include "bump.h"
#include "device.h"
#include "fatal_signals.h"
#include "harden.h"
#include "lib.h"
#include "profile_range.h"
#include "runner_proto.h"

namespace sandbox::runner {
namespace {

char g_note[512];  // the crash handler's note (a missing tensor's name)
std::string g_known;

void send_reply(const Reply& r) {
  while (send(kRunnerFd, &r, sizeof r, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

// Async-signal-safe: the signal and the note in a local Reply, one send(2), then death
// by the signal. The judge writes the crash file (the runner cannot write there).
void on_fatal(int sig) {
  Reply r{};
  r.op = Op::kCrash;
  r.rc = sig;
  for (size_t n = 0; g_note[n] && n + 1 < sizeof r.text; ++n) r.text[n] = g_note[n];
  send(kRunnerFd, &r, sizeof r, MSG_NOSIGNAL);
  raise(sig);  // SA_RESETHAND: the default action now
}

[[noreturn]] void missing_tensor(const char* name) {
  std::string msg = fmt::format("kf::Tensors: no tensor named '{}' (tensors: {})",
                                name ? name : "(null)", g_known);
  std::fprintf(stderr, "kforge-runner: %s\n", msg.c_str());
  std::snprintf(g_note, sizeof g_note, "%s", msg.c_str());
  std::abort();
}

// The Init message and, on the host backend, the heaps' descriptors.
bool receive_init(Init* init, std::vector<int>* fds, std::string* err) {
  std::vector<char> buf(1 << 20);
  char control[CMSG_SPACE(sizeof(int) * kf::kMaxWorld)] = {};
  iovec iov{buf.data(), buf.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t n = recvmsg(kRunnerFd, &m, MSG_CMSG_CLOEXEC);
  if (n <= 0) {
    *err = n == 0 ? "the judge closed the connection" : std::string("recvmsg: ") + strerror(errno);
    return false;
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const int* p = reinterpret_cast<const int*>(CMSG_DATA(c));
      fds->assign(p, p + k);
    }
  try {
    nlohmann::json::parse(buf.begin(), buf.begin() + n).get_to(*init);
  } catch (const std::exception& e) {
    *err = std::string("the judge's Init: ") + e.what();
    return false;
  }
  return true;
}

// Everything the candidate never needs, given up before it is loaded: the judge's steps
// (rank/harden.h), with writes only beneath scratch and /dev (CUDA opens device nodes
// read-write as it goes) and no socket at all. What could not be applied is said on
// stderr, which mpirun passes on. Under ncu or compute-sanitizer their injected library,
// which lives in this process, keeps files in the sandbox's private /tmp and talks to its
// front end over a local socket: those two stay allowed then (job.h `under_tool`).
void harden(const Init& init) {
  std::vector<std::string> notes;
  std::vector<std::string> writable = {init.scratch, "/dev"};
  if (init.under_tool) writable.push_back("/tmp");
  rank::harden_process(init.scratch, init.cpu_limit_s, writable, !init.under_tool, &notes);
  for (const std::string& n : notes)
    if (n.find("unavailable") != std::string::npos || n.find("cannot") != std::string::npos ||
        n.find("failed") != std::string::npos)
      std::fprintf(stderr, "kforge-runner: %s\n", n.c_str());
}

struct Runner {
  Init init;
  std::unique_ptr<Device> dev;
  rank::Lib lib;
  std::deque<std::string> strings;
  std::vector<kf::Tensor> pristine, items;
  std::vector<kf::Param> params;
  kf::Tensors tensors{};
  kf::Comm comm{}, call{};
  rank::Bump bump;
  uint32_t seq = 0;  // the request being served
};

// comm.barrier: the device's work done, then the judges' MPI_Barrier.
void barrier(void* ctx) {
  Runner* r = static_cast<Runner*>(static_cast<rank::Bump*>(ctx)->owner);
  std::string err;
  r->dev->synchronize(&err);  // an error resurfaces at the synchronize after the call
  Reply ask{};
  ask.op = Op::kBarrier;
  ask.seq = r->seq;
  send_reply(ask);
  Request go{};
  ssize_t n = recv(kRunnerFd, &go, sizeof go, 0);
  if (n != static_cast<ssize_t>(sizeof go) || go.op != Op::kGo) _exit(3);  // the judge is gone
}

void* alloc(void* ctx, size_t bytes) {
  return rank::bump_take(static_cast<rank::Bump*>(ctx), bytes);
}

void build_views(Runner& r) {
  const Init& in = r.init;
  for (const InitTensor& it : in.tensors) {
    kf::Tensor t{};
    t.name = r.strings.emplace_back(it.name).c_str();
    t.dtype = static_cast<kf::DType>(it.dtype);
    t.ndim = static_cast<int32_t>(it.shape.size());
    t.numel = 1;
    for (size_t d = 0; d < it.shape.size() && d < kf::kMaxDims; ++d)
      t.shape[d] = it.shape[d], t.numel *= it.shape[d];
    t.data = r.dev->base(in.rank) + it.offset;
    t.is_output = it.output ? 1 : 0;
    r.pristine.push_back(t);
    g_known += (g_known.empty() ? "" : ", ") + it.name;
  }
  for (const auto& [name, v] : in.params)
    r.params.push_back({r.strings.emplace_back(name).c_str(), v});
  r.tensors.count = static_cast<int32_t>(r.pristine.size());
  r.tensors.param_count = static_cast<int32_t>(r.params.size());
  r.tensors.params = r.params.data();
  r.tensors.missing_fn = &missing_tensor;
  r.bump.base = r.dev->base(in.rank) + in.workspace_offset;
  r.bump.cap = in.workspace_bytes;
  r.bump.owner = &r;
  kf::Comm& m = r.comm;
  m.rank = in.rank;
  m.world = in.world;
  m.local_rank = in.local_rank;
  m.device = r.dev->device();
  m.emulated = in.emulated ? 1 : 0;
  m.stream_ = r.dev->stream();
  for (int k = 0; k < in.world && k < kf::kMaxWorld; ++k) m.bases[k] = r.dev->base(k);
  m.heap_bytes = in.heap_bytes;
  m.ops.ctx = &r.bump;
  m.ops.alloc = &alloc;
  m.ops.barrier = &barrier;
  m.nccl_ = nullptr;
}

// One request: kf_setup, `calls` kf_runs (timed or not), or a ping.
Reply serve(Runner& r, const Request& q) {
  Reply rep{};
  rep.op = Op::kDone;
  rep.seq = q.seq;
  std::string err;
  rank::Timed t;
  bool ok = true;
  if (q.op == Op::kPing) {
    ok = r.dev->ping(&t, &err);
    rep.slack_ms = r.dev->slack_ms();
  } else {
    bool setup = q.op == Op::kSetup;
    rank::EntryFn fn = setup ? r.lib.setup : r.lib.run;
    int calls = setup || q.calls < 1 ? 1 : q.calls;
    if (setup) r.bump.used = q.bump_used;
    if (fn && q.timed) ok = r.dev->timer_start(&err);
    rank::ProfileRange range(q.profile != 0);
    if (!setup && q.stall_ms > 0) r.dev->stall_peer_reads(q.stall_ms);
    for (int i = 0; ok && fn && i < calls && rep.rc == 0; ++i) {
      // Fresh copies before every call: one that scribbles on its structs cannot break
      // the next.
      r.items = r.pristine;
      r.tensors.items = r.items.data();
      r.call = r.comm;
      rep.rc = fn(r.call, r.tensors);
    }
    if (!setup && q.stall_ms > 0) r.dev->end_stall();
    if (ok) ok = fn && q.timed ? r.dev->timer_stop(&t, &err) : r.dev->synchronize(&err);
    rep.bump_used = r.bump.used;
    rep.exhausted = r.bump.exhausted ? 1 : 0;
    rep.asked = r.bump.asked;
  }
  rep.device_ok = ok ? 1 : 0;
  rep.ms = t.ms;
  rep.off_stream = t.off_stream ? 1 : 0;
  std::snprintf(rep.text, sizeof rep.text, "%s", err.c_str());
  return rep;
}

int run(int argc, char** argv) {
  Backend backend = Backend::cuda;
  if (argc != 4 || !parse_enum(argv[2], &backend)) {
    std::fprintf(stderr, "usage: kforge-runner <local_rank> <cuda|host> <judge pid>\n");
    return 2;
  }
  // Die with the judge; and if it is already gone, do not start.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != std::atoi(argv[3])) return 2;
  rank::on_fatal_signals(on_fatal);
  Runner r;
  r.dev = backend == Backend::cuda ? make_cuda_device() : make_host_device();
  Reply ready{};
  ready.op = Op::kReady;
  std::string err;
  std::vector<int> fds;
  bool ok = r.dev->open(std::atoi(argv[1]), &err) && receive_init(&r.init, &fds, &err) &&
            r.dev->attach(r.init, fds, &err);
  if (!ok) {
    ready.device_ok = 0;
    std::snprintf(ready.text, sizeof ready.text, "%s", err.c_str());
    send_reply(ready);
    return 2;
  }
  build_views(r);
  harden(r.init);
  send_reply(ready);
  const bool spin = backend == Backend::cuda;
  bool loaded = false;
  for (;;) {
    Request q{};
    ssize_t n = recv_datagram(kRunnerFd, &q, sizeof q, spin ? 50 : 0);
    if (n <= 0 || q.op == Op::kQuit) break;
    if (n != static_cast<ssize_t>(sizeof q)) return 2;
    r.seq = q.seq;
    if (q.op == Op::kLoad) {
      Reply rep{};
      rep.op = Op::kDone;
      rep.seq = q.seq;
      loaded = rank::load_lib(Role::candidate, r.init.candidate_lib, &r.lib, &err);
      rep.rc = loaded ? 0 : 1;
      std::snprintf(rep.text, sizeof rep.text, "%s", loaded ? "" : err.c_str());
      send_reply(rep);
      continue;
    }
    if (!loaded && q.op != Op::kPing) return 2;  // no candidate to call
    send_reply(serve(r, q));
  }
  r.dev->detach();
  return 0;
}

}  // namespace
}  // namespace sandbox::runner

int main(int argc, char** argv) {
  return sandbox::runner::run(argc, argv);
}
