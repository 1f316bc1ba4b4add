// sandbox/rank/serve.h: warm ranks (sandbox/warm.h). `kforge-rank --serve <root>/ctl
// <job.json>...` runs the jobs on its command line as any launch does, then stays: rank 0
// reads the next request from <root>/ctl/requests (a FIFO kforge holds open), every rank
// gets it by MPI, reads its job.json files and runs them exactly as the jobs of one launch
// (a fresh runner per job, through the spawner: rank/spawner.h, started as the previous
// request ended so that its start is off the eval's path; a fresh secret; the heap zeroed; the
// libraries loaded from copies), writes its reports and status files into the new jobs' folders and
// waits again. The MPI world, the device context, the symmetric heap and NCCL are the bootstrap's,
// kept.
//
// The protocol, one JSON line per request:
//   {"jobs": ["<dir>/job.json", ...]}   the next eval's jobs (folders beneath <root>)
//   {"quit": true}                      end; so does the end of the FIFO (kforge is gone)
// and, once every rank is done with a request (its reports written, its runners gone),
// rank 0 writes <first job's dir>/served.json: {"request": N, "rc": 0|1|2, "refused": ""}
// (rc as the exit status of a launch; `refused` when the request could not be served on
// these ranks, e.g. it needs a bigger heap: the ranks then end, and kforge starts others).
// A fatal outcome (a candidate's crash, an unusable context) aborts the whole set as it
// would a launch (MPI_Abort).
#pragma once

#include <string>

#include "context.h"

namespace sandbox::rank {

// Opens <ctl>/alive, a FIFO kforge holds open and never writes, on every rank: once no
// writer is left (kforge exited or was killed, however), kforge_gone() says so, and the
// ranks' waits (the next request, the build gate) end instead of waiting forever.
void watch_kforge(const std::string& ctl);
bool kforge_gone();

// <root> for <root>/ctl ("" for "").
std::string serve_root(const std::string& ctl);

// Ends the command line's jobs (outcome `o`) as a request, then serves requests until
// told to quit, kforge is gone, or one cannot be served. The outcome of the last.
Outcome serve(Ctx& c, const std::string& ctl, Outcome o, const RankReport& boot);

}  // namespace sandbox::rank
