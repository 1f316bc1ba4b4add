// sandbox/runner/device_cuda.cu: the GPU runner device: every rank's heap opened from
// its judge's CUDA IPC handle (the runner's own rank's too: the judge allocated it), its
// own blocking stream, and the same timer as the judge's (rank/stream_timer.h).
#include <cuda_runtime.h>

#include <cstring>

#include "device.h"
#include "stream_timer.h"

namespace sandbox::runner {

namespace {

bool from_hex(const std::string& s, cudaIpcMemHandle_t* h) {
  if (s.size() != 2 * sizeof h->reserved) return false;
  auto nib = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < sizeof h->reserved; ++i)
    h->reserved[i] = static_cast<char>(nib(s[2 * i]) << 4 | nib(s[2 * i + 1]));
  return true;
}

class CudaDevice : public Device {
 public:
  bool open(int local_rank, std::string* err) override {
    int n = 0;
    KF_CUDA("cudaGetDeviceCount", cudaGetDeviceCount(&n));
    if (n <= 0) {
      *err = "no CUDA device is visible to the runner";
      return false;
    }
    device_ = local_rank % n;  // the judge's rule (rank/backend_cuda.cu)
    KF_CUDA("cudaSetDevice", cudaSetDevice(device_));
    KF_CUDA("cudaFree (context)", cudaFree(nullptr));
    // A blocking stream, as the judge's: a stray launch on the legacy default stream
    // stays ordered with it.
    cudaStream_t s = nullptr;
    KF_CUDA("cudaStreamCreate", cudaStreamCreate(&s));
    stream_ = s;
    return timer_.init(stream_, err);
  }
  bool attach(const Init& init, const std::vector<int>&, std::string* err) override {
    for (size_t r = 0; r < init.ipc_handles.size(); ++r) {
      cudaIpcMemHandle_t h{};
      if (!from_hex(init.ipc_handles[r], &h)) {
        *err = "rank " + std::to_string(r) + "'s IPC handle is malformed";
        return false;
      }
      void* p = nullptr;
      cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
      if (e != cudaSuccess) {
        *err = rank::cuda_error_text("cudaIpcOpenMemHandle", e) + " for rank " + std::to_string(r) +
               "'s heap";
        return false;
      }
      bases_.push_back(static_cast<char*>(p));
    }
    // The first timed call would calibrate; do it now, before the candidate is loaded.
    rank::Timed t;
    return ping(&t, err);
  }
  char* base(int r) const override { return bases_[r]; }
  int device() const override { return device_; }
  void* stream() const override { return stream_; }
  bool synchronize(std::string* err) override {
    KF_CUDA("cudaGetLastError", cudaGetLastError());
    KF_CUDA("cudaDeviceSynchronize", cudaDeviceSynchronize());
    return true;
  }
  bool timer_start(std::string* err) override { return timer_.start(err); }
  bool timer_stop(rank::Timed* t, std::string* err) override { return timer_.stop(t, err); }
  bool ping(rank::Timed* t, std::string* err) override {
    return timer_.start(err) && timer_.busy(20, err) && timer_.stop(t, err);
  }
  double slack_ms() const override { return timer_.slack_ms(); }
  void detach() override {
    for (char* b : bases_) cudaIpcCloseMemHandle(b);
    bases_.clear();
    timer_.destroy();
  }

 private:
  int device_ = 0;
  void* stream_ = nullptr;
  rank::StreamTimer timer_;
  std::vector<char*> bases_;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device() {
  return std::make_unique<CudaDevice>();
}

}  // namespace sandbox::runner
