// sandbox/rank/calls.cpp: see calls.h.
#include "calls.h"

#include <fmt/format.h>

#include "status.h"

namespace sandbox::rank {

Outcome invoke(Ctx& c, Lib& lib, bool setup, const char* phase, const std::string& detail,
               double limit_s, bool restart, Timed* timed, int calls) {
  EntryFn fn = setup ? lib.setup : lib.run;
  if (!fn) return kOk;
  const char* name = setup ? "kf_setup" : "kf_run";
  if (setup || calls < 1) calls = 1;
  // Fresh copies before every call: a call that scribbles on its Tensor or Comm structs
  // cannot break the next one.
  auto fresh = [&] {
    c.items = c.pristine;
    c.tensors.items = c.items.data();
    c.comm_call = lib.who == "baseline" ? c.comm_base : c.comm_cand;
  };
  std::string err;
  status_set(phase, detail, true, limit_s, restart);
  if (timed && !c.be->timer_start(&err)) {
    status_set(phase, detail, false, limit_s, false);
    add_failure(c, "crash", lib.who, phase, "before " + std::string(name) + ": " + err);
    return kFatal;
  }
  int rc = 0;
  for (int i = 0; i < calls && rc == 0; ++i) {
    fresh();
    rc = fn(c.comm_call, c.tensors);
  }
  bool ok = timed ? c.be->timer_stop(timed, &err) : c.be->synchronize(&err);
  if (ok && timed) timed->ms /= calls;
  status_set(phase, detail, false, limit_s, false);
  if (!ok) {
    add_failure(c, "crash", lib.who, phase,
                fmt::format("CUDA error after {} ({}): {}", name, detail, err));
    return kFatal;
  }
  if (rc != 0) {
    add_failure(c, setup ? "setup_error" : "crash", lib.who, phase,
                fmt::format("{} returned {} ({}); it must return 0 on success", name, rc, detail));
    return kFailed;
  }
  return kOk;
}

}  // namespace sandbox::rank
