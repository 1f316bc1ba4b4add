// sandbox/rank/data.cpp: see data.h.
#include "data.h"

#include <fmt/format.h>
#include <mpi.h>

#include <cmath>
#include <stdexcept>

#include "compare.h"
#include "steps.h"

namespace sandbox::rank {

inputs::Init init_of(const JobTensor& t) {
  inputs::Init i;
  i.dist = t.init.dist == "normal" ? inputs::Dist::normal
           : t.init.dist == "int"  ? inputs::Dist::integer
                                   : inputs::Dist::uniform;
  i.a = t.init.a;
  i.b = t.init.b;
  return i;
}

bool generator_selfcheck(const Place& at, const Device& dev, const CallArgs& args, uint64_t secret,
                         std::string* err) {
  uint64_t seed = inputs::call_seed(secret, 5, 0, 0);
  std::vector<uint8_t> got, want;
  for (size_t i = 0; i < args.pristine.size(); ++i) {
    if (at.jt(i).output) continue;
    const kf::Tensor& t = args.pristine[i];
    if (!dev.be->generate(t.data, t.numel, t.dtype, seed, at.rank, static_cast<int>(i),
                          init_of(at.jt(i)), err) ||
        !dev.be->synchronize(err))
      return false;
    got.resize(t.bytes());
    want.resize(t.bytes());
    if (!dev.be->to_host(got.data(), t.data, got.size(), err)) return false;
    inputs::generate_host(want.data(), t.numel, t.dtype, seed, at.rank, static_cast<int>(i),
                          init_of(at.jt(i)));
    for (int64_t k = 0; k < t.numel; ++k) {
      uint64_t g = inputs::load(got.data(), k, t.dtype), w = inputs::load(want.data(), k, t.dtype);
      if (g != w) {
        *err = fmt::format(
            "the device generated {:#x} for element {} of '{}' where the CPU generates {:#x}: "
            "sandbox/inputs.h is not bit-identical on this device (was it built with "
            "--fmad=false?)",
            g, k, t.name, w);
        return false;
      }
    }
  }
  return true;
}

bool prepare(const Place& at, const Device& dev, const CallArgs& args, uint64_t seed,
             std::string* err) {
  PartClock clock("inputs");
  for (size_t i = 0; i < args.pristine.size(); ++i) {
    const kf::Tensor& t = args.pristine[i];
    bool ok = at.jt(i).output ? dev.be->poison(t.data, t.bytes(), err)
                              : dev.be->generate(t.data, t.numel, t.dtype, seed, at.rank,
                                                 static_cast<int>(i), init_of(at.jt(i)), err);
    if (!ok) return false;
  }
  return true;
}

bool poison_inputs(const Place& at, const Device& dev, const CallArgs& args, std::string* err) {
  PartClock clock("inputs");
  for (size_t i = 0; i < args.pristine.size(); ++i) {
    const kf::Tensor& t = args.pristine[i];
    if (!at.jt(i).output && !dev.be->poison(t.data, t.bytes(), err)) return false;
  }
  return true;
}

bool read_outputs(const Place& at, const Device& dev, const CallArgs& args, Values* out,
                  std::string* err) {
  PartClock clock("outputs");
  out->clear();
  std::vector<uint8_t> raw;
  for (size_t i = 0; i < args.pristine.size(); ++i) {
    if (!at.jt(i).output) continue;
    const kf::Tensor& t = args.pristine[i];
    raw.resize(t.bytes());
    if (!dev.be->to_host(raw.data(), t.data, raw.size(), err)) return false;
    std::vector<double>& v = (*out)[at.jt(i).name];
    v.resize(static_cast<size_t>(t.numel));
    for (int64_t k = 0; k < t.numel; ++k)
      v[k] = inputs::decode(inputs::load(raw.data(), k, t.dtype), t.dtype);
  }
  return true;
}

bool gather_inputs(const Place& at, uint64_t seed, AllInputs* all, std::string* err) {
  PartClock clock("oracle");
  all->clear();
  for (size_t i = 0; i < at.job.tensors.size(); ++i) {
    const JobTensor& t = at.jt(i);
    if (t.output) continue;
    std::vector<int> counts(at.world), offsets(at.world);
    int total = 0;
    for (int r = 0; r < at.world; ++r) {
      int64_t n = numel_of(t.shape_by_rank[r]);
      if (total + n > (int64_t(1) << 30)) {  // MPI counts and offsets are ints
        *err = fmt::format("input '{}' is too large to gather for the oracle", t.name);
        return false;
      }
      counts[r] = static_cast<int>(n);
      offsets[r] = total;
      total += counts[r];
    }
    // This rank's values, rebuilt on the CPU from its own seed (the device's are the
    // candidate's to have changed; the input check compares the two).
    std::vector<double> mine(static_cast<size_t>(counts[at.rank]));
    inputs::Init init = init_of(t);
    for (int64_t k = 0; k < counts[at.rank]; ++k)
      mine[k] = inputs::decode(
          inputs::element_bits(seed, at.rank, static_cast<int>(i), k, init, t.dtype), t.dtype);
    std::vector<double> flat(static_cast<size_t>(total));
    MPI_Allgatherv(mine.data(), counts[at.rank], MPI_DOUBLE, flat.data(), counts.data(),
                   offsets.data(), MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < at.world; ++r)
      (*all)[{i, r}].assign(flat.begin() + offsets[r], flat.begin() + offsets[r] + counts[r]);
  }
  return true;
}

bool oracle_expected(const Place& at, const Oracle& oracle, const AllInputs& all, Values* want,
                     std::string* err) {
  PartClock clock("oracle");
  if (!oracle.loaded()) {
    *err = "no oracle for problem '" + at.job.settings.problem + "'";
    return false;
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < at.job.tensors.size(); ++i) index[at.jt(i).name] = i;
  auto find = [&](const std::string& name) -> size_t {
    auto it = index.find(name);
    if (it == index.end())
      throw std::runtime_error("the oracle asked for tensor '" + name + "', which the job lacks");
    return it->second;
  };
  want->clear();
  for (size_t i = 0; i < at.job.tensors.size(); ++i)
    if (at.jt(i).output)  // NaN: an element the oracle forgets to write fails loudly
      (*want)[at.jt(i).name].assign(static_cast<size_t>(numel_of(at.shape(i, at.rank))), NAN);

  OracleIO io;
  io.world = at.world;
  io.rank = at.rank;
  io.params = at.job.params;
  io.str_params = at.job.str_params;
  io.input = [&](const std::string& name, int r) -> const std::vector<double>& {
    size_t i = find(name);
    if (at.jt(i).output)
      throw std::runtime_error("the oracle asked for output '" + name + "' as an input");
    if (r < 0 || r >= at.world)
      throw std::runtime_error(fmt::format("the oracle asked for '{}' of rank {}", name, r));
    return all.at({i, r});
  };
  io.shape = [&](const std::string& name, int r) -> const std::vector<int64_t>& {
    size_t i = find(name);
    if (r < 0 || r >= at.world)
      throw std::runtime_error(
          fmt::format("the oracle asked for the shape of '{}' on rank {}", name, r));
    return at.shape(i, r);
  };
  io.out = [&](const std::string& name) -> std::vector<double>& {
    auto it = want->find(name);
    if (it == want->end())
      throw std::runtime_error("the oracle wrote '" + name + "', which is not an output");
    return it->second;
  };
  try {
    std::string why;
    if (!oracle.call(io, &why)) {
      *err = "oracle of '" + at.job.settings.problem + "': " + why;
      return false;
    }
  } catch (const std::exception& e) {
    *err = "oracle of '" + at.job.settings.problem + "': " + e.what();
    return false;
  }
  return true;
}

bool compare_outputs(const Place& at, const Values& got, const Values& want, Failure* f) {
  PartClock clock("outputs");
  for (size_t i = 0; i < at.job.tensors.size(); ++i) {
    const JobTensor& t = at.jt(i);
    if (!t.output) continue;
    auto g = got.find(t.name);
    auto w = want.find(t.name);
    if (g == got.end() || w == want.end()) continue;
    Comparison cmp = compare_values(g->second, w->second, at.shape(i, at.rank), t.atol, t.rtol);
    if (cmp.bad_count == 0) continue;
    f->kind = Status::mismatch;
    describe(cmp, t.name, false, f);
    return false;
  }
  return true;
}

bool inputs_unchanged(const Place& at, const Device& dev, const CallArgs& args, uint64_t seed,
                      Failure* f, bool* same, std::string* err) {
  PartClock clock("inputs check");
  *same = true;
  std::vector<uint8_t> got, want;
  for (size_t i = 0; i < args.pristine.size(); ++i) {
    if (at.jt(i).output) continue;
    const kf::Tensor& t = args.pristine[i];
    got.resize(t.bytes());
    want.resize(t.bytes());
    if (!dev.be->to_host(got.data(), t.data, got.size(), err)) return false;
    inputs::generate_host(want.data(), t.numel, t.dtype, seed, at.rank, static_cast<int>(i),
                          init_of(at.jt(i)));
    if (got == want) continue;
    Comparison cmp = compare_bits(got, want, t.dtype, at.shape(i, at.rank));
    f->kind = Status::mismatch;
    describe(cmp, t.name, true, f);
    *same = false;
    return true;
  }
  return true;
}

}  // namespace sandbox::rank
