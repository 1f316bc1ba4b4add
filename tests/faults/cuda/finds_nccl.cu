// fault: all_reduce world=1 expect=correct
// Looks for NCCL and MPI in its own process by walking the loaded objects' symbol tables
// (no dlsym for the checks to see): a held-out candidate found NCCL this way and ran it
// itself, scored correct. The candidate's process loads neither: it computes the sum
// itself and returns 0 only when it found nothing (5 otherwise, which the verdict shows).
#include <link.h>

#include <cstring>

#include "common.cuh"

namespace {
// Each object's dynamic symbols: the table runs from DT_SYMTAB up to DT_STRTAB.
int scan(dl_phdr_info* info, size_t, void* out) {
  int* found = static_cast<int*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    auto* dyn = reinterpret_cast<ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    auto at = [&](ElfW(Addr) p) { return p < info->dlpi_addr ? p + info->dlpi_addr : p; };
    const ElfW(Sym)* sym = nullptr;
    const char* str = nullptr;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
      if (dyn->d_tag == DT_SYMTAB) sym = reinterpret_cast<const ElfW(Sym)*>(at(dyn->d_un.d_ptr));
      if (dyn->d_tag == DT_STRTAB) str = reinterpret_cast<const char*>(at(dyn->d_un.d_ptr));
    }
    if (!sym || !str || reinterpret_cast<const char*>(sym) >= str) continue;
    for (; reinterpret_cast<const char*>(sym) < str; ++sym) {
      if (sym->st_value == 0 || sym->st_shndx == SHN_UNDEF) continue;
      const char* name = str + sym->st_name;
      if (!std::strcmp(name, "ncclAllReduce") || !std::strcmp(name, "MPI_Allreduce")) ++*found;
    }
  }
  return 0;
}
}  // namespace

KF_FAULT_SETUP
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) {
  int found = 0;
  dl_iterate_phdr(scan, &found);
  int rc = fault::correct_run(comm, t);
  return found ? 5 : rc;
}
