// sandbox/rank/setup.cpp: see setup.h.
#include "setup.h"

#include <fmt/format.h>
#include <mpi.h>

#include "calls.h"
#include "status.h"

namespace sandbox::rank {

namespace {

void* bump_alloc(void* ctx, size_t bytes) {
  return bump_take(static_cast<Bump*>(ctx), bytes);
}

void mpi_barrier(void* ctx) {
  // Device work enqueued before the barrier (a memset of flags, say) is done on every
  // rank once the barrier returns.
  Bump* b = static_cast<Bump*>(ctx);
  std::string err;
  static_cast<Backend*>(b->owner)->synchronize(
      &err);  // an error here resurfaces at the synchronize after kf_setup
  MPI_Barrier(MPI_COMM_WORLD);
}

// After one library's kf_setup: the workspace must be within bounds and the same on
// every rank.
Outcome check_allocs(const Place& at, const Bump& bump, Results& out, const Lib& lib) {
  unsigned long long used = bump.used, lo = 0, hi = 0;
  int ex = bump.exhausted ? 1 : 0, any_ex = 0;
  MPI_Allreduce(&used, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&used, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&ex, &any_ex, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  Outcome o = kOk;
  if (bump.exhausted) {
    add_failure(
        out, Status::setup_error, lib.who, "setup",
        fmt::format("comm.alloc asked for {} bytes with {} of the {} bytes of workspace in use: "
                    "workspace exhausted (the problem's workspace_bytes is {})",
                    bump.asked, bump.used, bump.cap, at.job.workspace_bytes));
    o = kFailed;
  } else if (!any_ex && lo != hi) {
    std::vector<unsigned long long> all(at.world);
    MPI_Gather(&used, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, 0,
               MPI_COMM_WORLD);
    if (at.rank == 0) {
      int other = 1;
      for (int r = 1; r < at.world; ++r)
        if (all[r] != all[0]) {
          other = r;
          break;
        }
      add_failure(
          out, Status::setup_error, lib.who, "setup",
          fmt::format(
              "comm.alloc calls differ between ranks (rank 0 allocated {} bytes, rank {} {}): "
              "every rank must make the same calls in the same order",
              all[0], other, all[other]));
      o = kFailed;
    }
  } else if (any_ex) {
    o = kFailed;  // another rank reported it
  }
  return agree(o);
}

}  // namespace

bool plan_heap(Place& at, HeapLayout* layout, std::string* err) {
  for (JobTensor& t : at.job.tensors) {
    if (t.shape_by_rank.size() == 1 && at.world > 1)  // one shape for every rank
      t.shape_by_rank.assign(at.world, t.shape_by_rank[0]);
    if (static_cast<int>(t.shape_by_rank.size()) != at.world) {
      *err = fmt::format("job.json: tensor '{}' has {} entries in shape_by_rank for a world of {}",
                         t.name, t.shape_by_rank.size(), at.world);
      return false;
    }
    for (const auto& s : t.shape_by_rank) {
      if (s.size() != t.shape_by_rank[0].size() || s.size() > static_cast<size_t>(kf::kMaxDims)) {
        *err = fmt::format(
            "job.json: tensor '{}' has shapes of differing or too many (> {}) dimensions", t.name,
            kf::kMaxDims);
        return false;
      }
      for (int64_t d : s)
        if (d < 0) {
          *err = fmt::format("job.json: tensor '{}' has a negative dimension", t.name);
          return false;
        }
    }
  }
  *layout = heap_layout(at.job);
  return true;
}

void build_views(const Place& at, const Device& dev, CallArgs& args) {
  std::string known;
  args.pristine.clear();
  for (size_t i = 0; i < at.job.tensors.size(); ++i) {
    const JobTensor& jt = at.job.tensors[i];
    kf::Tensor t{};
    t.name = args.strings.emplace_back(jt.name).c_str();
    t.dtype = jt.dtype;
    const auto& s = at.shape(i, at.rank);
    t.ndim = static_cast<int32_t>(s.size());
    for (size_t d = 0; d < s.size(); ++d) t.shape[d] = s[d];
    t.numel = numel_of(s);
    t.data = dev.be->base(at.rank) + dev.layout.offset[i];
    t.is_output = jt.output ? 1 : 0;
    args.pristine.push_back(t);
    known += (i ? ", " : "") + jt.name;
  }
  set_known_tensors(known);
  args.params.clear();
  for (const auto& [name, v] : at.job.params)
    args.params.push_back({args.strings.emplace_back(name).c_str(), v});
  args.items = args.pristine;
  args.tensors.count = static_cast<int32_t>(args.items.size());
  args.tensors.items = args.items.data();
  args.tensors.param_count = static_cast<int32_t>(args.params.size());
  args.tensors.params = args.params.data();
  args.tensors.missing_fn = &missing_tensor;

  args.bump.base = dev.be->base(at.rank) + dev.layout.workspace_offset;
  args.bump.cap = dev.layout.workspace_bytes;
  args.bump.owner = dev.be.get();
  kf::Comm m{};
  m.rank = at.rank;
  m.world = at.world;
  m.local_rank = at.local_rank;
  m.device = dev.be->device();
  m.emulated = dev.be->emulated() ? 1 : 0;
  m.stream_ = dev.be->stream();
  for (int r = 0; r < at.world && r < kf::kMaxWorld; ++r) m.bases[r] = dev.be->base(r);
  m.heap_bytes = dev.heap_bytes;
  m.ops.ctx = &args.bump;
  m.ops.alloc = &bump_alloc;
  m.ops.barrier = &mpi_barrier;
  m.nccl_ = nullptr;
  args.comm_cand = m;
  args.comm_base = m;
  args.comm_base.nccl_ = dev.be->nccl();
  if (at.job.candidate_is_baseline) args.comm_cand.nccl_ = dev.be->nccl();
}

Outcome run_setups(Ctx& c) {
  for (Lib* lib : {&c.libs.base, &c.libs.cand}) {
    if (lib == &c.libs.base && !c.libs.base_runs) continue;
    Outcome o = invoke(c.dev, c.args, c.libs.runner, c.out, *lib, true, RankPhase::setup,
                       std::string(role_name(lib->who)) + " kf_setup",
                       c.at.job.settings.limits.setup_s, true);
    if (o == kFatal) return o;
    // A kf_setup that gives up because comm.alloc returned null: the exhausted workspace
    // is the cause worth reporting, not the return code.
    if (o == kFailed && c.args.bump.exhausted) c.out.report.failures.pop_back();
    Outcome a = check_allocs(c.at, c.args.bump, c.out, *lib);  // collective: every rank runs it
    o = agree(o > a ? o : a);
    if (o != kOk) return o;
  }
  return kOk;
}

}  // namespace sandbox::rank
