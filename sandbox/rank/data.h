// sandbox/rank/data.h: the tensors' contents: generating inputs, poisoning outputs,
// reading outputs back, the oracle's expected outputs, the unchanged-inputs check.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "context.h"

namespace sandbox::rank {

// Each takes the parts of the rank's state it reads: `at` for the job's tensors and this
// rank, `dev` for the backend that writes and reads the device, `args` for where this
// rank's tensors lie (args.pristine).

// Generates every input of this rank (from a seed drawn from `secret`) on the device and
// compares it with the CPU's generation, bit for bit: the oracle and the input check rely
// on the two agreeing, so a disagreement is the sandbox's fault and must not be blamed on
// the candidate.
bool generator_selfcheck(const Place& at, const Device& dev, const CallArgs& args, uint64_t secret,
                         std::string* err);

// The generator's parameters of job tensor i.
inputs::Init init_of(const JobTensor& t);

// Fresh inputs for `seed` on this rank, then every output poisoned (0xFF bytes).
bool prepare(const Place& at, const Device& dev, const CallArgs& args, uint64_t seed,
             std::string* err);

// Every input of this rank overwritten with poison (0xFF bytes): what a peer still
// reading them after this rank's call returned gets (the race pass's exit probe).
bool poison_inputs(const Place& at, const Device& dev, const CallArgs& args, std::string* err);

// This rank's outputs, copied back and decoded.
bool read_outputs(const Place& at, const Device& dev, const CallArgs& args, Values* out,
                  std::string* err);

// Every rank's inputs of one call, by (tensor index, rank), decoded to doubles.
using AllInputs = std::map<std::pair<size_t, int>, std::vector<double>>;

// Every rank's inputs of the call whose inputs on this rank came from `seed` (collective):
// this rank's rebuilt on the CPU, the others' received from their ranks. A rank never
// holds another's seed, so no kernel can rebuild a peer's inputs instead of reading them;
// and this runs after the call, so no peer's inputs sit in this process during it.
bool gather_inputs(const Place& at, uint64_t seed, AllInputs* all, std::string* err);

// The oracle's expected outputs of this rank for the inputs `all`.
bool oracle_expected(const Place& at, const Oracle& oracle, const AllInputs& all, Values* want,
                     std::string* err);

// Compares `got` with `want`, output by output, with each tensor's tolerance; the first
// output that fails fills *f (kind "mismatch"). True when all pass.
bool compare_outputs(const Place& at, const Values& got, const Values& want, Failure* f);

// True when this rank's inputs still hold, bit for bit, what `seed` generated;
// otherwise *f describes the first modified input. False with *err on a device error.
bool inputs_unchanged(const Place& at, const Device& dev, const CallArgs& args, uint64_t seed,
                      Failure* f, bool* same, std::string* err);

}  // namespace sandbox::rank
