// bench/split_cost.cu: what it would cost to check and time a candidate from a process apart
// from the one that runs it (issue 10: a verdict the candidate cannot forge). One GPU, two
// processes: a "judge" that owns the memory (as kforge-rank does today) and a "runner" that
// maps it through CUDA IPC and runs the kernels on the judge's command over a socketpair, as
// the candidate's process would. Build and run on the GPU machine (well under a minute):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/split bench/split_cost.cu && /tmp/split
// It prints, as plain text for bench/RESULTS.md:
// (1) start-up: fork+exec of the runner, its CUDA context and the IPC mapping of a 256 MiB
//     heap, until it answers: what the split adds to every eval, once per rank;
// (2) per call, for kernels busy 0, 10, 100 and 1000 us (spinning on %globaltimer): the
//     runner's own event time (precise, but inside the process the candidate holds, so
//     forgeable), the judge's host round trip (command sent to reply read: out of the
//     candidate's reach, but it carries the socket and synchronize latency), and their
//     difference; also the same kernel timed in one process with events, as today;
// (3) how soon after the runner's reply the judge reads a word the kernel wrote, from its
//     own mapping: the most a runner that answers "done" early could gain unseen when every
//     timed call's output is verified.
// Medians and p10/p90 over 200 calls after 20 warm-ups. Exit code 1 on a wrong read-back,
// 2 on a CUDA or system error.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kHeapBytes = size_t(256) << 20;
constexpr int kWarmup = 20, kCalls = 200;
constexpr unsigned kBusyUs[] = {0, 10, 100, 1000};

#define CK(expr)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (expr);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

// Busy for `ns` of the device's clock, then writes `stamp` where the judge will look.
__global__ void busy_kernel(uint64_t ns, volatile uint32_t* out, uint32_t stamp) {
  uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  *out = stamp;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

void must(bool ok, const char* what) {
  if (!ok) {
    std::perror(what);
    std::exit(2);
  }
}
void send_all(int fd, const void* p, size_t n) {
  must(write(fd, p, n) == (ssize_t)n, "write");
}
void recv_all(int fd, void* p, size_t n) {
  for (size_t got = 0; got < n;) {
    ssize_t r = read(fd, static_cast<char*>(p) + got, n - got);
    must(r > 0, "read");
    got += r;
  }
}

struct Command {
  uint64_t ns;     // how long the kernel is busy; ~0 ends the runner
  uint32_t stamp;  // what it writes
};

// The runner: maps the judge's heap, then runs one kernel per command and answers with its
// own event time once the device is idle.
int runner(int fd) {
  CK(cudaSetDevice(0));
  cudaIpcMemHandle_t h;
  recv_all(fd, &h, sizeof h);
  void* heap = nullptr;
  CK(cudaIpcOpenMemHandle(&heap, h, cudaIpcMemLazyEnablePeerAccess));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  char ready = 1;
  send_all(fd, &ready, 1);
  for (Command c; recv_all(fd, &c, sizeof c), c.ns != ~uint64_t(0);) {
    CK(cudaEventRecord(a, s));
    busy_kernel<<<1, 32, 0, s>>>(c.ns, static_cast<uint32_t*>(heap), c.stamp);
    CK(cudaEventRecord(b, s));
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    send_all(fd, &ms, sizeof ms);
  }
  CK(cudaIpcCloseMemHandle(heap));
  return 0;
}

struct Stats {
  double p10, med, p90;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto q = [&](double f) { return v[static_cast<size_t>(f * (v.size() - 1))]; };
  return {q(0.1), q(0.5), q(0.9)};
}
void print_row(const char* what, unsigned us, const std::vector<double>& ms) {
  Stats s = stats(ms);
  std::printf("%-34s %6u %10.2f %10.2f %10.2f\n", what, us, s.med * 1e3, s.p10 * 1e3, s.p90 * 1e3);
}

// Today's way, for comparison: the same kernel timed with events in the judge's process.
void in_process(uint32_t* heap, unsigned us) {
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> ev;
  for (int i = -kWarmup; i < kCalls; ++i) {
    CK(cudaEventRecord(a, s));
    busy_kernel<<<1, 32, 0, s>>>(us * 1000ull, heap, 7);
    CK(cudaEventRecord(b, s));
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (i >= 0) ev.push_back(ms);
  }
  print_row("one process: events", us, ev);
}

int judge(const char* self) {
  auto t_fork = Clock::now();
  int sv[2];
  must(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
  // CUDA must not be initialized before fork: the judge starts its context after it, and the
  // runner execs itself for a clean one, as kforge would.
  pid_t pid = fork();
  must(pid >= 0, "fork");
  if (pid == 0) {
    close(sv[0]);
    std::string fd = std::to_string(sv[1]);
    execl(self, self, "--runner", fd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(sv[1]);
  const int fd = sv[0];
  CK(cudaSetDevice(0));
  void* heap = nullptr;
  CK(cudaMalloc(&heap, kHeapBytes));
  CK(cudaMemset(heap, 0, kHeapBytes));
  CK(cudaDeviceSynchronize());
  cudaIpcMemHandle_t h;
  CK(cudaIpcGetMemHandle(&h, heap));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("split_cost on %s: %d warm-ups, %d calls per row\n", prop.name, kWarmup, kCalls);

  // (1) Start-up: from the handle sent (the runner process is already exec'd and creating its
  // context in parallel with the judge's; kforge would start it the same way) to ready.
  auto t0 = Clock::now();
  send_all(fd, &h, sizeof h);
  char ready = 0;
  recv_all(fd, &ready, 1);
  std::printf(
      "runner ready (exec'd, CUDA context, IPC mapping of %zu MiB): %.1f ms after the "
      "judge's own context and heap were up (%.1f ms after the fork)\n\n",
      kHeapBytes >> 20, ms_since(t0), ms_since(t_fork));

  std::printf("%-34s %6s %10s %10s %10s\n", "per call (us)", "busy", "median", "p10", "p90");
  auto* word = static_cast<uint32_t*>(heap);
  for (unsigned us : kBusyUs) {
    std::vector<double> ev, rt, diff, seen;
    for (int i = -kWarmup; i < kCalls; ++i) {
      Command c{us * 1000ull, static_cast<uint32_t>(i + 1000)};
      auto t = Clock::now();
      send_all(fd, &c, sizeof c);
      float ms = 0;
      recv_all(fd, &ms, sizeof ms);
      double round_trip = ms_since(t);
      // (3) The judge reads the word from its own mapping at once.
      auto tr = Clock::now();
      uint32_t got = 0;
      CK(cudaMemcpy(&got, word, sizeof got, cudaMemcpyDeviceToHost));
      double read = ms_since(tr);
      if (got != c.stamp) {
        std::fprintf(stderr, "read back %u, want %u\n", got, c.stamp);
        return 1;
      }
      if (i < 0) continue;
      ev.push_back(ms);
      rt.push_back(round_trip);
      diff.push_back(round_trip - ms);
      seen.push_back(read);
    }
    print_row("runner: its own events", us, ev);
    print_row("judge: host round trip", us, rt);
    print_row("round trip - events", us, diff);
    print_row("judge: read-back after the reply", us, seen);
    in_process(word, us);
    std::printf("\n");
  }
  Command stop{~uint64_t(0), 0};
  send_all(fd, &stop, sizeof stop);
  int status = 0;
  waitpid(pid, &status, 0);
  CK(cudaFree(heap));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--runner") return runner(std::atoi(argv[2]));
  return judge(argv[0]);
}
