// sandbox/rank/runner_link.cpp: see runner_link.h.
#include "runner_link.h"

#include <fmt/format.h>
#include <mpi.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <vector>

#include "context.h"
#include "spawner.h"

extern char** environ;

namespace sandbox::rank {

namespace {

using runner::Op;
using runner::Reply;
using runner::Request;

// The runner's environment: the judge's, less what would let it reach MPI (the
// launcher's contact points and keys).
std::vector<std::string> runner_env() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string v = *e;
    bool mpi = false;
    for (const char* p : {"OMPI_", "PMIX_", "OPAL_", "PMI_", "HYDRA_", "MPI_"})
      mpi = mpi || v.rfind(p, 0) == 0;
    if (!mpi) env.push_back(v);
  }
  return env;
}

std::string runner_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string self = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "kforge-rank";
  size_t s = self.rfind('/');
  return (s == std::string::npos ? std::string(".") : self.substr(0, s)) + "/kforge-runner";
}

// How the runner ended, once it has (*signal: the signal that killed it). Never blocks
// for long: once the judge's own seccomp filter is on it cannot signal the runner, which
// then ends with the rank (PR_SET_PDEATHSIG, and the job's cgroup).
// In serve mode the runner is the spawner's child (rank/spawner.h), which reaps it.
std::string reap(RunnerLink& l, int wait_ms, int* signal = nullptr) {
  if (l.pid <= 0) return "it was never started";
  int st = 0;
  pid_t r = 0;
  if (spawner_active()) {
    int state = spawner_reap(l.pid, wait_ms, &st);
    r = state > 0 ? l.pid : state;
  } else {
    r = wait_or_kill(l.pid, wait_ms, &st);
  }
  if (r == 0) return "it is still running, and ends with this rank";
  l.pid = -1;
  if (r < 0) return "it was lost";
  if (WIFSIGNALED(st)) {
    if (signal) *signal = WTERMSIG(st);
    return fmt::format("it died of signal {} ({})", WTERMSIG(st), strsignal(WTERMSIG(st)));
  }
  return fmt::format("it exited with status {}", WEXITSTATUS(st));
}

bool send_request(RunnerLink& l, const Request& q) {
  return send(l.fd, &q, sizeof q, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof q);
}

// Receives one Reply (polling first for l.spin_ms: runner_proto.h); false on EOF, an
// error, or a message of the wrong size.
bool receive(RunnerLink& l, Reply* r) {
  ssize_t n = runner::recv_datagram(l.fd, r, sizeof *r, l.spin_ms);
  if (n != static_cast<ssize_t>(sizeof *r)) return false;
  r->text[sizeof r->text - 1] = 0;
  return true;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Starts the runner through the spawner (serve mode: this process may be hardened
// already), else itself; *pid and the judge's end *fd.
bool spawn_process(const std::vector<std::string>& args, pid_t* pid, int* fd, std::string* err) {
  std::vector<std::string> env = runner_env();
  if (spawner_active()) return spawner_spawn(args, env, runner::kRunnerFd, pid, fd, err);
  return spawn_with_socket(args, env, runner::kRunnerFd, pid, fd, err);
}

}  // namespace

bool spawn_runner(const Place& at, RunnerLink* link, std::string* err) {
  // The runner checks that its parent is the process named here: it dies with it.
  const pid_t parent = spawner_active() ? spawner_pid() : getpid();
  std::vector<std::string> args = {runner_path(), std::to_string(at.local_rank),
                                   backend_name(at.job.settings.backend), std::to_string(parent)};
  pid_t pid = -1;
  int fd = -1;
  if (!spawn_process(args, &pid, &fd, err)) return false;
  *link = RunnerLink{};
  link->pid = pid;
  link->fd = fd;
  link->spin_ms = at.job.settings.backend == sandbox::Backend::cuda ? 50 : 0;
  return true;
}

bool take_spare(std::vector<RunnerLink>& spares, RunnerLink* link) {
  while (!spares.empty()) {
    RunnerLink l = spares.back();
    spares.pop_back();
    // A runner waiting for its Init has written nothing: readable (EOF) or hung up means
    // its process is gone.
    pollfd p{l.fd, POLLIN, 0};
    if (l.fd >= 0 && poll(&p, 1, 0) == 0) {
      *link = l;
      return true;
    }
    stop_runner(l);
  }
  return false;
}

bool start_runner(const Place& at, const Device& dev, RunnerLink& l, std::string* load_err,
                  std::string* err) {
  runner::Init in;
  in.backend = at.job.settings.backend;
  in.rank = at.rank;
  in.world = at.world;
  in.local_rank = at.local_rank;
  in.emulated = dev.be->emulated();
  in.heap_bytes = dev.heap_bytes;
  std::vector<int> fds;
  if (!dev.be->export_heaps(&in.ipc_handles, &fds, err)) return false;
  for (size_t i = 0; i < at.job.tensors.size(); ++i) {
    const JobTensor& t = at.job.tensors[i];
    in.tensors.push_back({t.name, static_cast<int32_t>(t.dtype), at.shape(i, at.rank),
                          dev.layout.offset[i], t.output});
  }
  for (const auto& [name, v] : at.job.params) in.params.push_back({name, v});
  in.workspace_offset = dev.layout.workspace_offset;
  in.workspace_bytes = dev.layout.workspace_bytes;
  in.candidate_lib = at.job.candidate_lib;
  in.scratch = at.job.dir + "/scratch";
  in.cpu_limit_s = (at.job.settings.limits.total_s > 0 ? at.job.settings.limits.total_s : 600) + 60;
  in.under_tool = at.job.settings.under_tool;
  std::string text = nlohmann::json(in).dump();
  iovec iov{text.data(), text.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  if (!fds.empty()) {
    m.msg_control = control.data();
    m.msg_controllen = control.size();
    cmsghdr* cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cm), fds.data(), sizeof(int) * fds.size());
  }
  Reply ready{};
  if (sendmsg(l.fd, &m, MSG_NOSIGNAL) < 0 || !receive(l, &ready) || ready.op != Op::kReady) {
    *err = "the runner (the candidate's process) did not start: " + reap(l, 1000);
    return false;
  }
  if (!ready.device_ok) {
    *err = std::string("the runner could not set up: ") + ready.text;
    return false;
  }
  // Calibrated now, before the candidate's code exists in the runner: it cannot make
  // the round trip look noisier than it is to widen its own margin.
  if (at.job.timed && !calibrate_runner(dev, l, err)) return false;
  Request q{};
  q.op = Op::kLoad;
  RunnerCall rc = call_runner(l, q);
  if (!rc.replied) {
    *load_err = "the candidate's process ended while it loaded the library: " + rc.death;
    return true;
  }
  l.loaded = rc.reply.rc == 0;
  if (!l.loaded) *load_err = rc.reply.text;
  return true;
}

RunnerCall call_runner(RunnerLink& l, Request q) {
  RunnerCall out;
  q.seq = ++l.seq;
  auto t0 = std::chrono::steady_clock::now();
  if (!send_request(l, q)) {
    out.death = "the connection to it broke; " + reap(l, 1000);
    return out;
  }
  for (;;) {
    Reply r{};
    if (!receive(l, &r)) {
      out.death = reap(l, 1000, &out.signal);
      return out;
    }
    if (r.op == Op::kCrash) {
      out.signal = r.rc;
      out.note = r.text;
      out.death = reap(l, 1000, &out.signal);
      return out;
    }
    if (r.seq != q.seq || (r.op != Op::kDone && r.op != Op::kBarrier)) {
      out.death = fmt::format(
          "it sent a message the sandbox did not ask for (op {}, sequence {} for {}): a "
          "candidate must not write to the runner's descriptor {}",
          static_cast<int>(r.op), r.seq, q.seq, runner::kRunnerFd);
      close(l.fd);  // nothing more is read from it
      l.fd = -1;
      return out;
    }
    if (r.op == Op::kBarrier) {
      MPI_Barrier(MPI_COMM_WORLD);
      Request go{};
      go.op = Op::kGo;
      go.seq = q.seq;
      send_request(l, go);
      continue;
    }
    out.round_trip_ms = ms_since(t0);
    out.replied = true;
    out.reply = r;
    return out;
  }
}

bool calibrate_runner(const Device& dev, RunnerLink& l, std::string* err) {
  std::vector<double> over;
  for (int i = 0; i < 32; ++i) {
    // As before a timed call: the judge's L2 flush, its device idle, then the request.
    if (!dev.be->flush_l2(err) || !dev.be->synchronize(err)) return false;
    Request q{};
    q.op = Op::kPing;
    RunnerCall rc = call_runner(l, q);
    if (!rc.replied || !rc.reply.device_ok) {
      *err = "calibrating the runner's round trip: " +
             (rc.replied ? std::string(rc.reply.text) : rc.death);
      return false;
    }
    over.push_back(std::max(0.0, rc.round_trip_ms - rc.reply.ms));
    l.slack_ms = rc.reply.slack_ms;
  }
  set_overheads(&l, over);
  return true;
}

void quit_runner(RunnerLink& l) {
  if (l.pid > 0 && l.fd >= 0) {
    Request q{};
    q.op = Op::kQuit;
    send_request(l, q);
  }
  if (l.fd >= 0) close(l.fd);  // a runner that missed kQuit sees the end of its input
  l.fd = -1;
}

void stop_runner(RunnerLink& l) {
  quit_runner(l);
  if (l.pid > 0) reap(l, 5000);
}

}  // namespace sandbox::rank
