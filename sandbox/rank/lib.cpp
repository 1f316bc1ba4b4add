// sandbox/rank/lib.cpp: see lib.h.
#include "lib.h"

#include <dlfcn.h>

namespace sandbox::rank {

bool load_lib(Role who, const std::string& path, Lib* out, std::string* err) {
  out->who = who;
  out->path = path;
  dlerror();
  // RTLD_NOW: an undefined symbol is a load error here rather than a crash mid-run.
  out->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!out->handle) {
    const char* e = dlerror();
    *err = "dlopen: " + std::string(e ? e : path + ": unknown error");
    return false;
  }
  dlerror();
  out->run = reinterpret_cast<EntryFn>(dlsym(out->handle, "kf_run"));
  if (!out->run) {
    const char* e = dlerror();
    *err = "dlsym(kf_run): " + std::string(e ? e : "kf_run is null") +
           " (the library must define extern \"C\" int kf_run(kf::Comm&, kf::Tensors&))";
    return false;
  }
  dlerror();
  out->setup = reinterpret_cast<EntryFn>(dlsym(out->handle, "kf_setup"));
  dlerror();  // kf_setup is optional
  return true;
}

}  // namespace sandbox::rank
