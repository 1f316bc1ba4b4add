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
#include "stream_timer.h"

namespace sandbox::rank {

namespace {

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
    handles_.clear();
    for (int r = 0; r < cfg.world; ++r) handles_.push_back(all[r].h);
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
        *err = cuda_error_text("cudaIpcOpenMemHandle", e) + " for rank " + std::to_string(r) +
               "'s heap";
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
  double off_stream_slack_ms() const override { return timer_.slack_ms(); }

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
  bool zero(void* dst, size_t bytes, std::string* err) override {
    KF_CUDA("cudaMemsetAsync (zero)", cudaMemsetAsync(dst, 0, bytes, stream_));
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
  bool synchronize(std::string* err) override {
    // A launch error of the candidate's (bad configuration) is not sticky: ask for it
    // first, then wait for everything it enqueued on any stream.
    KF_CUDA("cudaGetLastError", cudaGetLastError());
    KF_CUDA("cudaDeviceSynchronize", cudaDeviceSynchronize());
    return true;
  }
  bool timer_start(std::string* err) override { return timer_.start(err); }
  bool timer_stop(Timed* t, std::string* err) override { return timer_.stop(t, err); }
  bool export_heaps(std::vector<std::string>* handles, std::vector<int>* fds,
                    std::string*) override {
    fds->clear();
    handles->clear();
    for (const cudaIpcMemHandle_t& h : handles_) {
      static const char* hex = "0123456789abcdef";
      std::string s;
      for (unsigned char b : h.reserved) s += std::string{hex[b >> 4], hex[b & 15]};
      handles->push_back(s);
    }
    return true;
  }
  void shutdown() override {
    MPI_Barrier(MPI_COMM_WORLD);  // no peer's kernel touches our heap any more
    // The NCCL communicator is left to the process's exit (kforge-rank ends with _exit
    // right after this). With ncclCommDestroy here, this release took 0.42-0.45 s in
    // about half of the H200's cached evals and 0.03 s in the others; without it, see
    // bench/RESULTS.md ("one launch"). The exit releases it anyway.
    for (int r = 0; r < static_cast<int>(bases_.size()); ++r)
      if (opened_[r]) cudaIpcCloseMemHandle(bases_[r]);
    MPI_Barrier(MPI_COMM_WORLD);  // every peer has closed its mapping of our heap
    if (heap_) cudaFree(heap_);
    if (l2_) cudaFree(l2_);
    timer_.destroy();
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
    if (!timer_.init(stream_, err)) return false;
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, cfg_.heap_bytes);
    if (e != cudaSuccess) {
      *err = cuda_error_text("cudaMalloc", e) + " for a heap of " +
             std::to_string(cfg_.heap_bytes) + " bytes";
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
  StreamTimer timer_;
  char* heap_ = nullptr;
  cudaIpcMemHandle_t handle_{};
  std::vector<char*> bases_;
  std::vector<bool> opened_;
  void* l2_ = nullptr;
  size_t l2_bytes_ = 0;
  unsigned flushes_ = 0;
  void* nccl_ = nullptr;
  std::vector<cudaIpcMemHandle_t> handles_;  // every rank's heap, for the runner
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

}  // namespace sandbox::rank
