// sandbox/rank/backend_cuda.cu: the GPU backend. One cudaMalloc per rank holds the
// symmetric heap; peers' heaps are mapped through CUDA IPC, so comm.bases[r] is a UVA
// pointer a kernel can load from and store to. Built with --fmad=false so the input
// kernel computes exactly what sandbox/inputs.h computes on the CPU.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "backend.h"

namespace sandbox::rank {

namespace {

std::string cuda_msg(const char* call, cudaError_t e) {
  return std::string(call) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}

// Checks one CUDA call; on failure *err names the call and the error.
#define KF_CUDA(call_name, expr)      \
  do {                                \
    cudaError_t e_ = (expr);          \
    if (e_ != cudaSuccess) {          \
      *err = cuda_msg(call_name, e_); \
      return false;                   \
    }                                 \
  } while (0)

#define KF_NCCL(call_name, expr)                                     \
  do {                                                               \
    ncclResult_t r_ = (expr);                                        \
    if (r_ != ncclSuccess) {                                         \
      *err = std::string(call_name) + ": " + ncclGetErrorString(r_); \
      return false;                                                  \
    }                                                                \
  } while (0)

__global__ void generate_kernel(void* dst, int64_t numel, kf::DType t, uint64_t seed, int rank,
                                int tensor_index, inputs::Init init) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += stride)
    inputs::store(dst, i, t, inputs::element_bits(seed, rank, tensor_index, i, init, t));
}

// Busy for `ns` nanoseconds of the device's clock: a stand-in for a short call while the
// timer calibrates.
__global__ void busy_kernel(uint64_t ns) {
  uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

class CudaBackend : public Backend {
 public:
  bool init(const BackendConfig& cfg, std::string* err) override {
    cfg_ = cfg;
    bool ok = init_local(err);
    // The handle exchange is collective: every rank reaches it, failed or not.
    struct Slot {
      int ok;
      cudaIpcMemHandle_t h;
    } mine{};
    mine.ok = ok ? 1 : 0;
    if (ok) mine.h = handle_;
    std::vector<Slot> all(cfg.world);
    if (MPI_Allgather(&mine, sizeof(Slot), MPI_BYTE, all.data(), sizeof(Slot), MPI_BYTE,
                      MPI_COMM_WORLD) != MPI_SUCCESS) {
      *err = "MPI_Allgather of the CUDA IPC handles failed";
      return false;
    }
    if (!ok) return false;
    for (int r = 0; r < cfg.world; ++r)
      if (!all[r].ok) {
        *err = "rank " + std::to_string(r) + " could not create its GPU heap";
        return false;
      }
    bases_.assign(cfg.world, nullptr);
    opened_.assign(cfg.world, false);
    for (int r = 0; r < cfg.world; ++r) {
      if (r == cfg.rank) {
        bases_[r] = heap_;
        continue;
      }
      void* p = nullptr;
      cudaError_t e = cudaIpcOpenMemHandle(&p, all[r].h, cudaIpcMemLazyEnablePeerAccess);
      if (e != cudaSuccess) {
        *err = cuda_msg("cudaIpcOpenMemHandle", e) + " for rank " + std::to_string(r) + "'s heap";
        return false;
      }
      bases_[r] = static_cast<char*>(p);
      opened_[r] = true;
    }
    return true;
  }

  bool init_nccl(std::string* err) override {
    ncclUniqueId id;
    std::memset(&id, 0, sizeof id);
    int ok = 1;
    std::string why;
    if (cfg_.rank == 0) {
      ncclResult_t r = ncclGetUniqueId(&id);
      if (r != ncclSuccess) {
        ok = 0;
        why = std::string("ncclGetUniqueId: ") + ncclGetErrorString(r);
      }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
      *err = cfg_.rank == 0 ? why : "ncclGetUniqueId failed on rank 0";
      return false;
    }
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t c = nullptr;
    KF_NCCL("ncclCommInitRank", ncclCommInitRank(&c, cfg_.world, id, cfg_.rank));
    nccl_ = c;
    return true;
  }

  char* base(int r) const override { return bases_[r]; }
  int device() const override { return device_; }
  bool emulated() const override { return emulated_; }
  void* stream() const override { return stream_; }
  void* nccl() const override { return nccl_; }
  std::string device_name() const override { return name_; }
  int device_count() const override { return ndev_; }
  bool baseline_can_run() const override { return !emulated_ || cfg_.world == 1; }
  double off_stream_slack_ms() const override { return drain_limit_ms_ > 0 ? drain_limit_ms_ : 0; }

  bool generate(void* dst, int64_t numel, kf::DType t, uint64_t seed, int rank, int tensor_index,
                const inputs::Init& init, std::string* err) override {
    if (numel <= 0) return true;
    int64_t blocks = (numel + 255) / 256;
    if (blocks > 4096) blocks = 4096;
    generate_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream_>>>(dst, numel, t, seed, rank,
                                                                        tensor_index, init);
    KF_CUDA("generate_kernel launch", cudaGetLastError());
    return true;
  }
  bool poison(void* dst, size_t bytes, std::string* err) override {
    KF_CUDA("cudaMemsetAsync (poison)", cudaMemsetAsync(dst, 0xff, bytes, stream_));
    return true;
  }
  bool flush_l2(std::string* err) override {
    if (!l2_) return true;
    // A different byte each time so no cache or compression can skip the writes.
    KF_CUDA("cudaMemsetAsync (L2 flush)",
            cudaMemsetAsync(l2_, static_cast<int>((flushes_++ & 0x7f) + 1), l2_bytes_, stream_));
    return true;
  }
  bool to_host(void* dst, const void* src, size_t bytes, std::string* err) override {
    KF_CUDA("cudaStreamSynchronize", cudaStreamSynchronize(stream_));
    KF_CUDA("cudaMemcpy (device to host)", cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return true;
  }
  // synchronize(), and the host milliseconds it took.
  bool timed_synchronize(double* ms, std::string* err) {
    auto t0 = std::chrono::steady_clock::now();
    bool ok = synchronize(err);
    *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return ok;
  }
  // The off-stream test, calibrated 32 times on a call that leaves nothing behind (a
  // short kernel, its end event, then the synchronize): twice the 90th percentile of the
  // synchronize's host time, plus 5 us, is the longest drain of an honest call. A longer
  // one means work ran past the end event; less than that can go unseen.
  bool calibrate(std::string* err) {
    std::vector<double> drains;
    for (int i = 0; i < 32; ++i) {
      busy_kernel<<<1, 32, 0, stream_>>>(20000);
      KF_CUDA("busy_kernel launch", cudaGetLastError());
      KF_CUDA("cudaEventRecord (calibration)", cudaEventRecord(ev_end_, stream_));
      KF_CUDA("cudaEventSynchronize", cudaEventSynchronize(ev_end_));
      double ms = 0;
      if (!timed_synchronize(&ms, err)) return false;
      drains.push_back(ms);
    }
    std::sort(drains.begin(), drains.end());
    drain_limit_ms_ = 2 * drains[drains.size() * 9 / 10] + 0.005;
    return true;
  }
  bool synchronize(std::string* err) override {
    // A launch error of the candidate's (bad configuration) is not sticky: ask for it
    // first, then wait for everything it enqueued on any stream.
    KF_CUDA("cudaGetLastError", cudaGetLastError());
    KF_CUDA("cudaDeviceSynchronize", cudaDeviceSynchronize());
    return true;
  }
  bool timer_start(std::string* err) override {
    if (drain_limit_ms_ < 0 && !calibrate(err)) return false;
    KF_CUDA("cudaEventRecord (start)", cudaEventRecord(ev_start_, stream_));
    return true;
  }
  bool timer_stop(Timed* t, std::string* err) override {
    KF_CUDA("cudaEventRecord (end)", cudaEventRecord(ev_end_, stream_));
    KF_CUDA("cudaEventSynchronize", cudaEventSynchronize(ev_end_));
    double drain_ms = 0;
    if (!timed_synchronize(&drain_ms, err)) return false;
    float f = 0;
    KF_CUDA("cudaEventElapsedTime", cudaEventElapsedTime(&f, ev_start_, ev_end_));
    t->ms = f;
    // comm.stream() was done at the end event. If the device then took longer to go
    // idle than it does with nothing left, the call hid work elsewhere (another stream,
    // a graph, the copy engine), and its time runs to an event recorded once the host
    // saw the device idle: an upper bound of the work, late by the host's round trip
    // (a few microseconds), which an off-stream call pays and an honest one does not.
    t->off_stream = drain_ms > drain_limit_ms_;
    if (t->off_stream) {
      KF_CUDA("cudaEventRecord (idle)", cudaEventRecord(ev_idle_, stream_));
      KF_CUDA("cudaEventSynchronize", cudaEventSynchronize(ev_idle_));
      float g = 0;
      KF_CUDA("cudaEventElapsedTime", cudaEventElapsedTime(&g, ev_start_, ev_idle_));
      t->ms = std::max(f, g);
    }
    return true;
  }
  void shutdown() override {
    MPI_Barrier(MPI_COMM_WORLD);  // no peer's kernel touches our heap any more
    if (nccl_) ncclCommDestroy(static_cast<ncclComm_t>(nccl_));
    nccl_ = nullptr;
    for (int r = 0; r < static_cast<int>(bases_.size()); ++r)
      if (opened_[r]) cudaIpcCloseMemHandle(bases_[r]);
    MPI_Barrier(MPI_COMM_WORLD);  // every peer has closed its mapping of our heap
    if (heap_) cudaFree(heap_);
    if (l2_) cudaFree(l2_);
    if (ev_start_) cudaEventDestroy(ev_start_);
    if (ev_end_) cudaEventDestroy(ev_end_);
    if (ev_idle_) cudaEventDestroy(ev_idle_);
    if (stream_) cudaStreamDestroy(stream_);
    heap_ = nullptr;
    l2_ = nullptr;
    bases_.clear();
  }

 private:
  bool init_local(std::string* err) {
    KF_CUDA("cudaGetDeviceCount", cudaGetDeviceCount(&ndev_));
    if (ndev_ <= 0) {
      *err = "no CUDA device is visible (check CUDA_VISIBLE_DEVICES)";
      return false;
    }
    device_ = cfg_.local_rank % ndev_;
    emulated_ = cfg_.local_size > ndev_;
    KF_CUDA("cudaSetDevice", cudaSetDevice(device_));
    cudaDeviceProp prop;
    KF_CUDA("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device_));
    name_ = prop.name;
    // A blocking stream (default flags): work on the legacy default stream, such as a
    // candidate's stray launch without a stream, stays ordered with it.
    cudaStream_t s = nullptr;
    KF_CUDA("cudaStreamCreate", cudaStreamCreate(&s));
    stream_ = s;
    KF_CUDA("cudaEventCreate", cudaEventCreate(&ev_start_));
    KF_CUDA("cudaEventCreate", cudaEventCreate(&ev_end_));
    KF_CUDA("cudaEventCreate", cudaEventCreate(&ev_idle_));
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, cfg_.heap_bytes);
    if (e != cudaSuccess) {
      *err = cuda_msg("cudaMalloc", e) + " for a heap of " + std::to_string(cfg_.heap_bytes) +
             " bytes";
      return false;
    }
    heap_ = static_cast<char*>(p);
    KF_CUDA("cudaMemset (heap)", cudaMemset(heap_, 0, cfg_.heap_bytes));
    if (cfg_.l2_flush_bytes > 0) {
      l2_bytes_ = static_cast<size_t>(cfg_.l2_flush_bytes);
      KF_CUDA("cudaMalloc (L2 flush buffer)", cudaMalloc(&l2_, l2_bytes_));
    }
    KF_CUDA("cudaDeviceSynchronize", cudaDeviceSynchronize());
    KF_CUDA("cudaIpcGetMemHandle", cudaIpcGetMemHandle(&handle_, heap_));
    return true;
  }

  BackendConfig cfg_;
  int ndev_ = 0, device_ = 0;
  bool emulated_ = false;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t ev_start_ = nullptr, ev_end_ = nullptr, ev_idle_ = nullptr;
  char* heap_ = nullptr;
  cudaIpcMemHandle_t handle_{};
  std::vector<char*> bases_;
  std::vector<bool> opened_;
  void* l2_ = nullptr;
  size_t l2_bytes_ = 0;
  unsigned flushes_ = 0;
  void* nccl_ = nullptr;
  double drain_limit_ms_ = -1;  // set by calibrate() before the first timed call
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

}  // namespace sandbox::rank
