// sandbox/runner/device_host.cpp: the host backend's runner device: the judges'
// shared-memory heaps, mapped from the descriptors the judge sent; steady_clock times.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "device.h"
#include "peer_stall.h"

namespace sandbox::runner {

namespace {

class HostDevice : public Device {
 public:
  bool open(int, std::string*) override { return true; }
  bool attach(const Init& init, const std::vector<int>& fds, std::string* err) override {
    if (static_cast<int>(fds.size()) != init.world) {
      *err = "the judge sent " + std::to_string(fds.size()) + " heap descriptors for a world of " +
             std::to_string(init.world);
      return false;
    }
    bytes_ = init.heap_bytes;
    for (int fd : fds) {
      void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
      if (p == MAP_FAILED) {
        *err = std::string("mmap of a rank's heap: ") + std::strerror(errno);
        return false;
      }
      bases_.push_back(static_cast<char*>(p));
    }
    PeerStall::get().set_ranges(init, bases_);
    return true;
  }
  char* base(int r) const override { return bases_[r]; }
  int device() const override { return -1; }
  void* stream() const override { return nullptr; }
  bool synchronize(std::string*) override { return true; }
  bool timer_start(std::string*) override {
    t0_ = std::chrono::steady_clock::now();
    return true;
  }
  bool timer_stop(rank::Timed* t, std::string*) override {
    t->ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    t->off_stream = false;
    return true;
  }
  bool ping(rank::Timed* t, std::string* err) override {
    return timer_start(err) && timer_stop(t, err);
  }
  double slack_ms() const override { return 0; }
  void stall_peer_reads(double ms) override { PeerStall::get().arm(ms); }
  void end_stall() override { PeerStall::get().disarm(); }
  void detach() override {
    for (char* b : bases_) munmap(b, bytes_);
    bases_.clear();
  }

 private:
  std::vector<char*> bases_;
  size_t bytes_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

std::unique_ptr<Device> make_host_device() {
  return std::make_unique<HostDevice>();
}

}  // namespace sandbox::runner
