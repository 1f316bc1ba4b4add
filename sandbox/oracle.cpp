// sandbox/oracle.cpp: loading and calling a problem's oracle library (kforge-rank, tests).
#include "oracle.h"

#include <dlfcn.h>

#include <vector>

namespace sandbox {

std::string oracle_lib_beside(const std::string& candidate_lib) {
  const size_t slash = candidate_lib.rfind('/');
  return (slash == std::string::npos ? std::string(".") : candidate_lib.substr(0, slash)) +
         "/oracle.so";
}

Oracle::~Oracle() {
  if (handle_) dlclose(handle_);
}

bool Oracle::open(const std::string& lib_path, std::string* err) {
  void* h = dlopen(lib_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* why = dlerror();
    *err = lib_path + ": cannot load the oracle: " + (why ? why : "unknown error");
    return false;
  }
  auto fn = reinterpret_cast<kf_oracle_fn>(dlsym(h, KF_ORACLE_SYMBOL));
  if (!fn) {
    dlclose(h);
    *err =
        lib_path + ": defines no " KF_ORACLE_SYMBOL ": its oracle.cpp must use KF_ORACLE(<name>)";
    return false;
  }
  if (handle_) dlclose(handle_);
  handle_ = h;
  fn_ = fn;
  path_ = lib_path;
  return true;
}

namespace {

// The host's side of kf_oracle_io: OracleIO's callbacks behind C function pointers. An
// exception from a callback becomes the error text the library turns back into one.
struct Host {
  const OracleIO* io;
  std::string last_err;
};

template <typename F>
auto guarded(void* host, const char** err, F&& f) -> decltype(f()) {
  Host* h = static_cast<Host*>(host);
  try {
    return f();
  } catch (const std::exception& e) {
    h->last_err = e.what();
    *err = h->last_err.c_str();
    return nullptr;
  }
}

const double* host_input(void* host, const char* name, int r, size_t* n, const char** err) {
  return guarded(host, err, [&]() -> const double* {
    const std::vector<double>& v = static_cast<Host*>(host)->io->input(name, r);
    *n = v.size();
    return v.data();
  });
}

const int64_t* host_shape(void* host, const char* name, int r, size_t* n, const char** err) {
  return guarded(host, err, [&]() -> const int64_t* {
    const std::vector<int64_t>& v = static_cast<Host*>(host)->io->shape(name, r);
    *n = v.size();
    return v.data();
  });
}

double* host_out(void* host, const char* name, size_t* n, const char** err) {
  return guarded(host, err, [&]() -> double* {
    std::vector<double>& v = static_cast<Host*>(host)->io->out(name);
    *n = v.size();
    return v.data();
  });
}

}  // namespace

bool Oracle::call(const OracleIO& io, std::string* err) const {
  if (!fn_) {
    *err = "no oracle loaded";
    return false;
  }
  Host host{&io, {}};
  std::vector<const char*> pn, sn, sv;
  std::vector<double> pv;
  for (const auto& [k, v] : io.params) {
    pn.push_back(k.c_str());
    pv.push_back(v);
  }
  for (const auto& [k, v] : io.str_params) {
    sn.push_back(k.c_str());
    sv.push_back(v.c_str());
  }
  kf_oracle_io c{};
  c.world = io.world;
  c.rank = io.rank;
  c.n_params = static_cast<int>(pn.size());
  c.param_names = pn.data();
  c.param_values = pv.data();
  c.n_str_params = static_cast<int>(sn.size());
  c.str_param_names = sn.data();
  c.str_param_values = sv.data();
  c.host = &host;
  c.input = host_input;
  c.shape = host_shape;
  c.out = host_out;
  char buf[2048] = {0};
  if (fn_(&c, buf, sizeof buf) == 1) return true;
  *err = buf[0] ? buf : "the oracle failed without a message";
  return false;
}

}  // namespace sandbox
