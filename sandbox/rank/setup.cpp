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
Outcome check_allocs(Ctx& c, const Lib& lib) {
  unsigned long long used = c.bump.used, lo = 0, hi = 0;
  int ex = c.bump.exhausted ? 1 : 0, any_ex = 0;
  MPI_Allreduce(&used, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&used, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&ex, &any_ex, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  Outcome o = kOk;
  if (c.bump.exhausted) {
    add_failure(
        c, Status::setup_error, lib.who, "setup",
        fmt::format("comm.alloc asked for {} bytes with {} of the {} bytes of workspace in use: "
                    "workspace exhausted (the problem's workspace_bytes is {})",
                    c.bump.asked, c.bump.used, c.bump.cap, c.job.workspace_bytes));
    o = kFailed;
  } else if (!any_ex && lo != hi) {
    std::vector<unsigned long long> all(c.world);
    MPI_Gather(&used, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, 0,
               MPI_COMM_WORLD);
    if (c.rank == 0) {
      int other = 1;
      for (int r = 1; r < c.world; ++r)
        if (all[r] != all[0]) {
          other = r;
          break;
        }
      add_failure(
          c, Status::setup_error, lib.who, "setup",
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

bool plan_heap(Ctx& c, std::string* err) {
  for (JobTensor& t : c.job.tensors) {
    if (t.shape_by_rank.size() == 1 && c.world > 1)  // one shape for every rank
      t.shape_by_rank.assign(c.world, t.shape_by_rank[0]);
    if (static_cast<int>(t.shape_by_rank.size()) != c.world) {
      *err = fmt::format("job.json: tensor '{}' has {} entries in shape_by_rank for a world of {}",
                         t.name, t.shape_by_rank.size(), c.world);
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
  c.layout = heap_layout(c.job);
  return true;
}

void build_views(Ctx& c) {
  std::string known;
  c.pristine.clear();
  for (size_t i = 0; i < c.job.tensors.size(); ++i) {
    const JobTensor& jt = c.job.tensors[i];
    kf::Tensor t{};
    t.name = c.strings.emplace_back(jt.name).c_str();
    t.dtype = jt.dtype;
    const auto& s = c.shape(i, c.rank);
    t.ndim = static_cast<int32_t>(s.size());
    for (size_t d = 0; d < s.size(); ++d) t.shape[d] = s[d];
    t.numel = numel_of(s);
    t.data = c.be->base(c.rank) + c.layout.offset[i];
    t.is_output = jt.output ? 1 : 0;
    c.pristine.push_back(t);
    known += (i ? ", " : "") + jt.name;
  }
  set_known_tensors(known);
  c.params.clear();
  for (const auto& [name, v] : c.job.params)
    c.params.push_back({c.strings.emplace_back(name).c_str(), v});
  c.items = c.pristine;
  c.tensors.count = static_cast<int32_t>(c.items.size());
  c.tensors.items = c.items.data();
  c.tensors.param_count = static_cast<int32_t>(c.params.size());
  c.tensors.params = c.params.data();
  c.tensors.missing_fn = &missing_tensor;

  c.bump.base = c.be->base(c.rank) + c.layout.workspace_offset;
  c.bump.cap = c.layout.workspace_bytes;
  c.bump.owner = c.be.get();
  kf::Comm m{};
  m.rank = c.rank;
  m.world = c.world;
  m.local_rank = c.local_rank;
  m.device = c.be->device();
  m.emulated = c.be->emulated() ? 1 : 0;
  m.stream_ = c.be->stream();
  for (int r = 0; r < c.world && r < kf::kMaxWorld; ++r) m.bases[r] = c.be->base(r);
  m.heap_bytes = c.heap_bytes;
  m.ops.ctx = &c.bump;
  m.ops.alloc = &bump_alloc;
  m.ops.barrier = &mpi_barrier;
  m.nccl_ = nullptr;
  c.comm_cand = m;
  c.comm_base = m;
  c.comm_base.nccl_ = c.be->nccl();
  if (c.job.candidate_is_baseline) c.comm_cand.nccl_ = c.be->nccl();
}

Outcome run_setups(Ctx& c) {
  for (Lib* lib : {&c.base, &c.cand}) {
    if (lib == &c.base && !c.base_runs) continue;
    Outcome o =
        invoke(c, *lib, true, RankPhase::setup, std::string(role_name(lib->who)) + " kf_setup",
               c.job.settings.limits.setup_s, true);
    if (o == kFatal) return o;
    // A kf_setup that gives up because comm.alloc returned null: the exhausted workspace
    // is the cause worth reporting, not the return code.
    if (o == kFailed && c.bump.exhausted) c.report.failures.pop_back();
    Outcome a = check_allocs(c, *lib);  // collective: every rank runs it
    o = agree(o > a ? o : a);
    if (o != kOk) return o;
  }
  return kOk;
}

}  // namespace sandbox::rank
