// sandbox/rank/backend.h: what differs between running on a GPU and on the CPU.
// Everything else (the flow, checks, timing, reports) is shared and sees only this.
//
// Errors: functions return false with *err naming the call and the error. On the cuda
// backend an error after the candidate ran leaves the context unusable (a trap or an
// illegal address is sticky): the caller reports a crash and aborts the job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inputs.h"

namespace sandbox::rank {

// What one timed call (or batch of calls) cost.
struct Timed {
  double ms = 0;  // from the start to the end of all the work it caused, on any stream
  // Work was still running on the device after comm.stream()'s end event (enqueued on
  // another stream or by another route): ms then runs to the device being idle.
  bool off_stream = false;
  // The candidate's: the judge's round trip less the claimed time (rank/runner_link.h).
  double overhead_ms = 0;
};

struct BackendConfig {
  int rank = 0, world = 1;
  int local_rank = 0, local_size = 1;
  size_t heap_bytes = 0;
  int64_t l2_flush_bytes = 0;
  std::string shm_prefix;  // host: POSIX shm names are <prefix>-<rank>
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Creates this rank's zeroed heap and maps every peer's (collective over MPI_COMM_WORLD).
  virtual bool init(const BackendConfig& cfg, std::string* err) = 0;
  // Creates the NCCL communicator the baseline uses (collective); host: nothing.
  virtual bool init_nccl(std::string* err) = 0;
  virtual char* base(int r) const = 0;
  virtual int device() const = 0;     // -1 on the host
  virtual bool emulated() const = 0;  // several local ranks share one device
  virtual void* stream() const = 0;   // cudaStream_t, or nullptr
  virtual void* nccl() const = 0;     // ncclComm_t, or nullptr
  virtual std::string device_name() const = 0;
  virtual int device_count() const = 0;
  // The baseline can run here (NCCL refuses two ranks on one GPU).
  virtual bool baseline_can_run() const = 0;

  // Writes the generated values of one tensor (asynchronously on the GPU).
  virtual bool generate(void* dst, int64_t numel, kf::DType t, uint64_t seed, int rank,
                        int tensor_index, const inputs::Init& init, std::string* err) = 0;
  virtual bool poison(void* dst, size_t bytes, std::string* err) = 0;  // 0xFF bytes
  virtual bool zero(void* dst, size_t bytes, std::string* err) = 0;    // 0 bytes
  virtual bool flush_l2(std::string* err) = 0;
  virtual bool to_host(void* dst, const void* src, size_t bytes, std::string* err) = 0;
  // Waits for all work of this process; the error of a faulted kernel surfaces here.
  virtual bool synchronize(std::string* err) = 0;
  // Around one kf_run: start, then stop waits for all the work of this process and says
  // how long it took. The time ends at comm.stream()'s end event unless the device was
  // still busy after it; then it ends when the device is idle (the timer is not fooled
  // by work hidden on another stream).
  virtual bool timer_start(std::string* err) = 0;
  virtual bool timer_stop(Timed* t, std::string* err) = 0;
  // The most work past the end event that the timer cannot tell from noise (0 on the
  // host, where there are no streams); known after the first timer_start.
  virtual double off_stream_slack_ms() const = 0;
  // What the runner needs to map every rank's heap: cuda, every rank's IPC handle (hex);
  // host, a descriptor of every rank's shared-memory object (owned by the backend).
  virtual bool export_heaps(std::vector<std::string>* handles, std::vector<int>* fds,
                            std::string* err) = 0;
  // Releases peers' mappings and the heap (collective); not called after a fatal error.
  virtual void shutdown() = 0;
};

std::unique_ptr<Backend> make_host_backend();
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace sandbox::rank
