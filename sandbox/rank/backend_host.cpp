// sandbox/rank/backend_host.cpp: the CPU backend. The symmetric heap is one POSIX
// shared-memory object per rank, mapped by every rank; kf_run runs synchronously on the
// calling thread, so synchronizing is a no-op and times come from steady_clock.
#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "backend.h"

namespace sandbox::rank {

namespace {

std::string shm_name(const std::string& prefix, int rank) {
  std::string p = prefix;
  if (p.empty() || p[0] != '/') p = "/" + p;
  return p + "-" + std::to_string(rank);
}

class HostBackend : public Backend {
 public:
  bool init(const BackendConfig& cfg, std::string* err) override {
    cfg_ = cfg;
    std::string prefix = cfg.shm_prefix;
    if (prefix.empty()) {
      // No prefix in the job: rank 0 picks one from its pid so concurrent jobs differ.
      long long id = cfg.rank == 0 ? static_cast<long long>(getpid()) : 0;
      MPI_Bcast(&id, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
      prefix = "kforge-" + std::to_string(id);
    }
    std::string mine = shm_name(prefix, cfg.rank);
    int fd = shm_open(mine.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {  // left over by a killed run with the same prefix
      shm_unlink(mine.c_str());
      fd = shm_open(mine.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    }
    bool ok = fd >= 0;
    std::string why;
    if (!ok) why = "shm_open(" + mine + "): " + std::strerror(errno);
    if (ok && ftruncate(fd, static_cast<off_t>(cfg.heap_bytes)) != 0) {
      ok = false;
      why = "ftruncate(" + mine + ", " + std::to_string(cfg.heap_bytes) +
            "): " + std::strerror(errno) + " (is /dev/shm large enough?)";
    }
    bases_.assign(cfg.world, nullptr);
    fds_.assign(cfg.world, -1);
    if (ok) ok = map(fd, cfg.rank, mine, &why);
    if (fd >= 0) fds_[cfg.rank] = fd;
    // Everyone's object exists before anyone opens a peer's.
    if (!agree(ok, why, err)) return cleanup_fail(mine);
    for (int r = 0; r < cfg.world && ok; ++r) {
      if (r == cfg.rank) continue;
      std::string name = shm_name(prefix, r);
      int pfd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
      if (pfd < 0) {
        ok = false;
        why = "shm_open(" + name + ") of rank " + std::to_string(r) + ": " + std::strerror(errno);
        break;
      }
      ok = map(pfd, r, name, &why);
      fds_[r] = pfd;
    }
    // Every rank has mapped every object: the names can go, so nothing is left in
    // /dev/shm even if the job is killed from here on.
    bool all = agree(ok, why, err);
    shm_unlink(mine.c_str());
    return all;
  }
  bool init_nccl(std::string*) override { return true; }
  char* base(int r) const override { return bases_[r]; }
  int device() const override { return -1; }
  bool emulated() const override { return false; }
  void* stream() const override { return nullptr; }
  void* nccl() const override { return nullptr; }
  std::string device_name() const override {
    return "host CPU (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
  }
  int device_count() const override { return 0; }
  bool baseline_can_run() const override { return true; }

  bool generate(void* dst, int64_t numel, kf::DType t, uint64_t seed, int rank, int tensor_index,
                const inputs::Init& init, std::string*) override {
    inputs::generate_host(dst, numel, t, seed, rank, tensor_index, init);
    return true;
  }
  bool poison(void* dst, size_t bytes, std::string*) override {
    std::memset(dst, 0xff, bytes);
    return true;
  }
  bool zero(void* dst, size_t bytes, std::string*) override {
    std::memset(dst, 0, bytes);
    return true;
  }
  bool flush_l2(std::string*) override { return true; }
  bool to_host(void* dst, const void* src, size_t bytes, std::string*) override {
    std::memcpy(dst, src, bytes);
    return true;
  }
  bool synchronize(std::string*) override { return true; }
  double off_stream_slack_ms() const override { return 0; }
  bool timer_start(std::string*) override {
    t0_ = std::chrono::steady_clock::now();
    return true;
  }
  bool timer_stop(Timed* t, std::string*) override {
    t->ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    t->off_stream = false;
    return true;
  }
  bool export_heaps(std::vector<std::string>* handles, std::vector<int>* fds,
                    std::string*) override {
    handles->clear();
    *fds = fds_;
    return true;
  }
  void shutdown() override {
    MPI_Barrier(MPI_COMM_WORLD);  // no peer touches our memory any more
    close_fds();
    for (char* b : bases_)
      if (b) munmap(b, cfg_.heap_bytes);
    bases_.clear();
  }

 private:
  bool map(int fd, int r, const std::string& name, std::string* why) {
    void* p = mmap(nullptr, cfg_.heap_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      *why = "mmap(" + name + "): " + std::strerror(errno);
      return false;
    }
    bases_[r] = static_cast<char*>(p);
    return true;
  }
  // Collective: true when every rank succeeded; *err names the first rank that did not.
  bool agree(bool ok, const std::string& why, std::string* err) {
    int bad = ok ? cfg_.world : cfg_.rank, first = 0;
    MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == cfg_.world) return true;
    *err = ok ? "rank " + std::to_string(first) + " could not set up its shared-memory heap" : why;
    return false;
  }
  bool cleanup_fail(const std::string& mine) {
    shm_unlink(mine.c_str());
    close_fds();
    return false;
  }
  void close_fds() {
    for (int& fd : fds_)
      if (fd >= 0) close(fd), fd = -1;
  }

  BackendConfig cfg_;
  std::vector<char*> bases_;
  std::vector<int> fds_;  // every rank's object, kept open for the runner
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

std::unique_ptr<Backend> make_host_backend() {
  return std::make_unique<HostBackend>();
}

}  // namespace sandbox::rank
