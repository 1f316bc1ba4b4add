// sandbox/runner/device_cuda.cu: the GPU runner device: every rank's heap opened from
// its judge's CUDA IPC handle (the runner's own rank's too: the judge allocated it), its
// own blocking stream, and the same timer as the judge's (rank/stream_timer.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "device.h"
#include "stream_timer.h"

namespace sandbox::runner {

namespace {

// The exit probe's slow rank on the GPU (CudaDevice::end_stall): every block spins until
// the end the first one to start sets, `ns` after its start, in *until (zeroed first).
__global__ void hold_sms(unsigned long long* until, unsigned long long ns) {
  unsigned long long now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  if (threadIdx.x == 0) atomicCAS(until, 0ull, now + ns);
  __syncthreads();
  while (now < *static_cast<volatile unsigned long long*>(until)) {
    __nanosleep(2000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  }
}

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
    return timer_.init(stream_, err) && init_hold(err);
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
  // The race pass's exit probe (runner/peer_stall.h is the host's): device memory does
  // not fault, so the slow rank is made slow another way. The moment the candidate's
  // call returns, a kernel on a stream of the highest priority takes every block slot of
  // every SM for `ms`; the call's kernels still queued (those behind its entry wait, which
  // read the peers' inputs) start only when it ends, by which time the fast rank has
  // returned and its judge has poisoned its inputs. A kernel that waits for its peers
  // before it returns is only slower. The blocks fill an SM's block slots and threads
  // both (Hopper: 32 blocks of 64 threads), and a second wave waits, ahead of any block
  // of the candidate's, for a slot a finishing block of the candidate's frees.
  void stall_peer_reads(double ms) override { stall_ms_ = ms; }
  void end_stall() override {
    const double ms = stall_ms_;
    stall_ms_ = 0;
    // Not over an error of the candidate's, which synchronize() must still report; and
    // an error of its own launch is cleared, to be no one's: the probe then did nothing.
    if (ms <= 0 || !until_ || cudaPeekAtLastError() != cudaSuccess) return;
    auto hold = static_cast<cudaStream_t>(hold_stream_);
    cudaMemsetAsync(until_, 0, sizeof *until_, hold);
    hold_sms<<<hold_grid_, hold_block_, 0, hold>>>(until_,
                                                   static_cast<unsigned long long>(ms * 1e6));
    (void)cudaGetLastError();
  }
  void detach() override {
    for (char* b : bases_) cudaIpcCloseMemHandle(b);
    bases_.clear();
    timer_.destroy();
  }

 private:
  bool init_hold(std::string* err) {
    int least = 0, greatest = 0, sms = 0, blocks = 0, threads = 0;
    KF_CUDA("cudaDeviceGetStreamPriorityRange",
            cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s = nullptr;
    KF_CUDA("cudaStreamCreateWithPriority",
            cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    hold_stream_ = s;
    KF_CUDA("cudaDeviceGetAttribute",
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_));
    KF_CUDA("cudaDeviceGetAttribute",
            cudaDeviceGetAttribute(&blocks, cudaDevAttrMaxBlocksPerMultiprocessor, device_));
    KF_CUDA("cudaDeviceGetAttribute",
            cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device_));
    hold_block_ = std::max(32, threads / std::max(blocks, 1));
    hold_grid_ = 2 * sms * std::max(blocks, 1);
    KF_CUDA("cudaMalloc (exit probe)", cudaMalloc(&until_, sizeof *until_));
    return true;
  }

  int device_ = 0;
  void* stream_ = nullptr;
  rank::StreamTimer timer_;
  std::vector<char*> bases_;
  double stall_ms_ = 0;  // the exit probe's hold, for the call under way (end_stall)
  void* hold_stream_ = nullptr;
  unsigned long long* until_ = nullptr;
  int hold_grid_ = 0, hold_block_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_cuda_device() {
  return std::make_unique<CudaDevice>();
}

}  // namespace sandbox::runner
