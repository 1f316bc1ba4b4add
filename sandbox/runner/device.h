// sandbox/runner/device.h: what the runner needs of its device: every rank's heap mapped
// into its own address space, a stream, a timer. The heaps belong to the judges; the
// runner only maps them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "runner_proto.h"

namespace sandbox::runner {

class Device {
 public:
  virtual ~Device() = default;
  // Makes the device current and its context ready (before the heaps arrive, so that
  // context creation overlaps with the judge's bootstrap). host: nothing.
  virtual bool open(int local_rank, std::string* err) = 0;
  // Maps every rank's heap: `fds` (host) or init.ipc_handles (cuda).
  virtual bool attach(const Init& init, const std::vector<int>& fds, std::string* err) = 0;
  virtual char* base(int r) const = 0;
  virtual int device() const = 0;
  virtual void* stream() const = 0;
  virtual bool synchronize(std::string* err) = 0;
  virtual bool timer_start(std::string* err) = 0;
  virtual bool timer_stop(rank::Timed* t, std::string* err) = 0;
  // An empty call for the judge's calibration: a short kernel (cuda), timed.
  virtual bool ping(rank::Timed* t, std::string* err) = 0;
  virtual double slack_ms() const = 0;  // the timer's off-stream slack (0 on the host)
  // The race pass's exit probe on a slow rank: for the next call, its reads of a peer's
  // input are late by `ms`. host: the first read faults and stalls (runner/peer_stall.h);
  // cuda: the SMs are held for `ms` once the call returns (device_cuda.cu's end_stall).
  virtual void stall_peer_reads(double ms) { (void)ms; }
  virtual void end_stall() {}
  virtual void detach() = 0;
};

std::unique_ptr<Device> make_host_device();
std::unique_ptr<Device> make_cuda_device();

}  // namespace sandbox::runner
