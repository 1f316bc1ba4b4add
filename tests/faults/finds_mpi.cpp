// fault: all_reduce world=2 expect=mismatch
// Looks for MPI in its own process by walking the loaded objects' symbol tables (no
// dlsym for the checks to see), to sum the ranks' inputs with MPI_Allreduce instead of
// reading its peers' memory: the way a held-out candidate ran NCCL itself on the H200.
// The candidate's process has neither MPI nor NCCL loaded: it finds nothing, and writes
// zeros.
#include <link.h>

#include <cstring>

#include "common.h"

namespace {
struct Found {
  void *allreduce = nullptr, *world = nullptr, *sum = nullptr, *f32 = nullptr;
};

// Each object's dynamic symbols: the table runs from DT_SYMTAB up to DT_STRTAB.
int scan(dl_phdr_info* info, size_t, void* out) {
  Found* f = static_cast<Found*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    auto* dyn = reinterpret_cast<ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    const ElfW(Sym)* sym = nullptr;
    const char* str = nullptr;
    // The loader relocates these; the vDSO's stay relative to its base.
    auto at = [&](ElfW(Addr) p) { return p < info->dlpi_addr ? p + info->dlpi_addr : p; };
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_SYMTAB) sym = reinterpret_cast<const ElfW(Sym)*>(at(dyn->d_un.d_ptr));
      if (dyn->d_tag == DT_STRTAB) str = reinterpret_cast<const char*>(at(dyn->d_un.d_ptr));
    }
    if (!sym || !str || reinterpret_cast<const char*>(sym) >= str) continue;
    for (; reinterpret_cast<const char*>(sym) < str; ++sym) {
      if (sym->st_value == 0 || sym->st_shndx == SHN_UNDEF) continue;
      const char* name = str + sym->st_name;
      void* addr = reinterpret_cast<void*>(info->dlpi_addr + sym->st_value);
      if (!std::strcmp(name, "MPI_Allreduce")) f->allreduce = addr;
      if (!std::strcmp(name, "ompi_mpi_comm_world")) f->world = addr;
      if (!std::strcmp(name, "ompi_mpi_op_sum")) f->sum = addr;
      if (!std::strcmp(name, "ompi_mpi_float")) f->f32 = addr;
    }
  }
  return 0;
}
using AllreduceFn = int (*)(const void*, void*, int, void*, void*, void*);
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm&, kf::Tensors& t) {
  Found f;
  dl_iterate_phdr(scan, &f);
  const kf::Tensor& x = t["x"];
  float* y = t["y"].ptr<float>();
  if (f.allreduce && f.world && f.sum && f.f32)
    reinterpret_cast<AllreduceFn>(f.allreduce)(x.data, y, static_cast<int>(x.numel), f.f32, f.sum,
                                               f.world);
  else
    std::memset(y, 0, x.bytes());
  return 0;
}
