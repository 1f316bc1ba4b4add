// Probe (problem all_reduce, fp32): a correct all_reduce whose rank 0, on its first call,
// writes its whole environment to ./env.txt and records whether it could create
// /tmp/kforge_escape_probe_<pid>. Verdict: correct; the test reads env.txt (no API keys).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

extern char** environ;

#include <kf/kf.h>
#include <sched.h>

#include <atomic>

namespace {

uint32_t* g_arrived = nullptr;  // g_arrived[s]: the last barrier rank s has entered
uint32_t g_epoch = 0;

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

namespace {

void probe() {
  FILE* f = std::fopen("env.txt", "w");
  if (!f) return;
  for (char** e = environ; e && *e; ++e) std::fprintf(f, "%s\n", *e);
  const std::string path = "/tmp/kforge_escape_probe_" + std::to_string(getpid());
  const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
  if (fd >= 0) {
    std::fprintf(f, "escape_probe %s: created\n", path.c_str());
    close(fd);
    unlink(path.c_str());  // leave nothing behind; the line above is the evidence
  } else {
    std::fprintf(f, "escape_probe %s: refused: %s\n", path.c_str(), std::strerror(errno));
  }
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd)) std::fprintf(f, "cwd %s\n", cwd);
  std::fclose(f);
}

}  // namespace

extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  static bool probed = false;
  if (comm.rank == 0 && !probed) {
    probed = true;
    probe();
  }
  const kf::Tensor& x = t["x"];
  float* y = t["y"].ptr<float>();
  const int64_t n = t["y"].numel;
  barrier(comm);
  for (int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int r = 0; r < comm.world; ++r) s += comm.peer(x.ptr<const float>(), r)[i];
    y[i] = s;
  }
  barrier(comm);
  return 0;
}
