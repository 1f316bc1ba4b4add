// sandbox/build.cpp: the build and its cache key. (The words a build gives back, its
// summary and the compiler log trimming, are sandbox/build_log.cpp.)
#include "build.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "confine.h"
#include "process.h"
#include "sha256.h"
#include "symbols.h"

namespace fs = std::filesystem;

namespace sandbox {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool write_file(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  return static_cast<bool>(out.flush());
}

std::string unique_suffix() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mu);
  char buf[48];
  snprintf(buf, sizeof buf, "%d-%016llx", static_cast<int>(getpid()),
           static_cast<unsigned long long>(rng()));
  return buf;
}

std::vector<std::string> base_env(const std::string& tmpdir) {
  std::vector<std::string> env = {"TMPDIR=" + tmpdir, "LC_ALL=C"};
  std::string path = env_entry("PATH");
  env.push_back(path.empty() ? "PATH=/usr/local/cuda/bin:/usr/bin:/bin" : path);
  std::string ld = env_entry("LD_LIBRARY_PATH");
  if (!ld.empty()) env.push_back(ld);
  return env;
}

// Where the compiler may read: the toolchain (under /usr, or the install root of a
// compiler elsewhere), kforge's headers, NCCL's for a baseline, and the cache entry it
// writes into.
Confinement compiler_jail(const Toolchain& tc, const std::string& compiler, const std::string& dir,
                          Role role) {
  Confinement c;
  c.read_only = {tc.include_dir};
  std::error_code ec;
  fs::path real = fs::canonical(compiler, ec);
  if (!ec && real.string().rfind("/usr/", 0) != 0)
    c.read_only.push_back(real.parent_path().parent_path().string());
  if (role == Role::baseline)
    for (const std::string& d : {tc.nccl_include, tc.nccl_lib_dir})
      if (!d.empty()) c.read_only.push_back(d);
  c.writable = {dir};
  c.memory_bytes = uint64_t{8} << 30;
  c.max_pids = 256;
  return c;
}

// `<compiler> --version`, once per compiler per process: part of the cache key.
std::string compiler_version(const std::string& compiler, double limit_s) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(compiler);
  if (it != cache.end()) return it->second;
  ProcessSpec spec;
  spec.argv = {compiler, "--version"};
  spec.env = base_env("/tmp");
  spec.limit_s = limit_s;
  ProcessResult r;
  std::string err;
  std::string v = run_process(spec, &r, &err) ? r.output : "unavailable: " + err;
  cache[compiler] = v;
  return v;
}

// Every file under dir, by relative path, with its contents.
void hash_tree(const std::string& dir, Sha256* h) {
  if (dir.empty() || !fs::is_directory(dir)) return;
  std::vector<fs::path> files;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (auto& f : files) {
    std::string rel = fs::relative(f, dir).string(), data;
    read_file(f.string(), &data);
    h->update(rel);
    h->update("\0", 1);
    h->update(std::to_string(data.size()));
    h->update("\0", 1);
    h->update(data);
  }
}

bool wants_sm90a(const std::string& src) {
  std::string first = src.substr(0, src.find('\n'));
  return first.find("// kf: sm_90a") != std::string::npos ||
         src.find("wgmma") != std::string::npos || src.find("setmaxnreg") != std::string::npos;
}

}  // namespace

std::vector<std::string> compile_flags(const Toolchain& tc, const std::string& source, Role role) {
  std::vector<std::string> f;
  if (tc.backend == Backend::cuda) {
    // nvcc's -O is the host compiler's alone (cicc and ptxas optimize the device code at
    // their defaults whatever it says: the same SASS at -O2 as at -O3), and the host side
    // of a library here is launch glue: -O3 only made gcc slower (bench/RESULTS.md,
    // issue 34).
    f = {"-O2", "-std=c++17"};
    if (wants_sm90a(source))
      f.push_back("-gencode=arch=compute_90a,code=sm_90a");
    else
      f.push_back("-arch=" + tc.arch);
    for (const char* s : {"-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", "-lineinfo"})
      f.push_back(s);
    f.push_back("-I" + tc.include_dir);
    if (role == Role::baseline) {
      if (!tc.nccl_include.empty()) f.push_back("-I" + tc.nccl_include);
      if (!tc.nccl_lib_dir.empty()) f.push_back("-L" + tc.nccl_lib_dir);
      // Some images ship only the runtime's libnccl.so.2, without the -dev symlink.
      bool dev_link =
          tc.nccl_lib_dir.empty() || access((tc.nccl_lib_dir + "/libnccl.so").c_str(), F_OK) == 0;
      f.push_back(dev_link ? "-lnccl" : "-l:libnccl.so.2");
      if (source.find("cublas") != std::string::npos) {
        f.push_back("-lcublas");
        f.push_back("-lcublasLt");
      }
      if (!tc.nccl_lib_dir.empty()) {
        f.push_back("-Xlinker");
        f.push_back("-rpath=" + tc.nccl_lib_dir);
      }
    }
  } else {
    f = {"-O2", "-std=c++20", "-shared", "-fPIC", "-Wall", "-I" + tc.include_dir};
  }
  return f;
}

namespace {

// 1. The static checks; false (with out's verdict) where they reject the source.
bool passes_static_checks(const Toolchain& tc, const std::string& source, Role role,
                          BuildResult* out) {
  auto t0 = Clock::now();
  StaticPolicy pol;
  pol.allow_multicast = tc.allow_multicast;
  pol.file_name = out->file_name;
  bool pass = static_check(source, role, pol, &out->findings);
  out->static_s = since(t0);
  if (pass) return true;
  out->stage = "static";
  out->status = Status::rejected;
  // A source without kf_run (and nothing else wrong) is the load_error it would become.
  bool only_entry = std::all_of(out->findings.begin(), out->findings.end(),
                                [](const Finding& f) { return f.rule == "entry"; });
  if (only_entry) {
    out->status = Status::load_error;
    out->log = out->file_name +
               " defines no kf_run: declare extern \"C\" int kf_run(kf::Comm&, "
               "kf::Tensors&) at namespace scope";
    out->findings.clear();
  }
  return false;
}

// 2a. The cache key: everything the library depends on (source, role, backend, flags,
// the compiler and its version, kforge's headers).
std::string cache_key(const Toolchain& tc, const std::string& source, Role role,
                      const std::string& compiler, const std::vector<std::string>& flags) {
  Sha256 h;
  h.update(std::string("kforge-build-v1\0", 16));
  h.update(source);
  for (const std::string& part : {std::string("role=") + role_name(role),
                                  std::string("backend=") + backend_name(tc.backend)}) {
    h.update("\0", 1);
    h.update(part);
  }
  for (auto& f : flags) {
    h.update(f);
    h.update("\0", 1);
  }
  h.update(compiler);
  h.update(compiler_version(compiler, std::min(30.0, tc.limit_s)));
  hash_tree(tc.include_dir, &h);
  return h.hex_digest();
}

// What a failed compile leaves the person: the compiler's trimmed log, after why it stopped.
void compile_failed(const Toolchain& tc, const std::string& tool, const ProcessResult& r,
                    const ConfinedRun& cr, const Confinement& jail, const std::string& tmp_src,
                    BuildResult* out) {
  out->stage = "compile";
  out->status = Status::compile_error;
  out->log = trim_compiler_log(r.output, tmp_src, out->file_name);
  if (r.timed_out) {
    char buf[96];
    snprintf(buf, sizeof buf, "%s took longer than %g s", tool.c_str(), tc.limit_s);
    out->log = std::string(buf) + "\n" + out->log;
  } else if (cr.oom_killed) {
    out->log = tool + " went past its memory limit of " + std::to_string(jail.memory_bytes >> 20) +
               " MiB\n" + out->log;
  } else if (r.signal) {
    out->log = tool + " died with " + signal_name(r.signal) + "\n" + out->log;
  }
}

// 2b. The compiler, confined, into the cache directory `dir`; out->lib_path in place on
// success, a compile_error verdict otherwise. false: kforge could not run it.
bool compile_into(const Toolchain& tc, const std::string& compiler,
                  const std::vector<std::string>& flags, const std::string& source, Role role,
                  const std::string& dir, BuildResult* out, std::string* err) {
  std::error_code ec;
  std::string ext = tc.backend == Backend::cuda ? ".cu" : ".cpp";
  std::string sfx = unique_suffix();
  std::string tmp_src = dir + "/src-" + sfx + ext;
  std::string tmp_lib = dir + "/lib-" + sfx + ".so";
  std::string tmp_dir = dir + "/tmp-" + sfx;
  fs::create_directories(tmp_dir, ec);
  if (!write_file(tmp_src, source)) {
    *err = tmp_src + ": cannot write";
    return false;
  }
  ProcessSpec spec;
  spec.argv.push_back(compiler);
  spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
  spec.argv.insert(spec.argv.end(), {"-o", tmp_lib, tmp_src});
  spec.env = base_env(tmp_dir);
  spec.cwd = dir;
  spec.limit_s = tc.limit_s;
  spec.output_cap = 256 << 10;
  for (auto& a : spec.argv) out->command += (out->command.empty() ? "" : " ") + a;
  // The compiler reads what the source names (#include of any path, #embed, an error
  // that quotes a line): it sees the toolchain, kforge's headers and this entry only.
  Confinement jail = compiler_jail(tc, compiler, dir, role);
  Confined confined;
  if (!confined.prepare(jail, &spec, err)) return false;
  ProcessResult r;
  bool started = run_process(spec, &r, err);
  ConfinedRun cr = confined.finish();
  fs::remove_all(tmp_dir, ec);
  if (!started) {
    fs::remove(tmp_src, ec);
    *err = "build: cannot start the compiler: " + *err;
    return false;
  }
  if (r.timed_out || !r.ok() || !fs::exists(tmp_lib)) {
    compile_failed(tc, fs::path(compiler).filename().string(), r, cr, jail, tmp_src, out);
    fs::remove(tmp_src, ec);
    fs::remove(tmp_lib, ec);
    return true;
  }
  // Keep the source beside the library for whoever looks into the cache later.
  fs::rename(tmp_src, dir + "/source" + ext, ec);
  fs::rename(tmp_lib, out->lib_path, ec);
  if (ec) {
    *err = out->lib_path + ": cannot rename the built library into place: " + ec.message();
    return false;
  }
  return true;
}

// 3. Imports, NEEDED, and the entry point; out->ok where all pass.
bool check_library(Role role, LibraryKind kind, BuildResult* out, std::string* err) {
  auto t2 = Clock::now();
  SymbolReport syms;
  if (!read_symbols_cached(out->lib_path, &syms, err)) return false;
  bool clean = check_symbols(syms, role, out->file_name, &out->findings);
  out->symbols_s = since(t2);
  if (!clean) {
    out->stage = "symbols";
    out->status = Status::rejected;
    return true;
  }
  if (kind == LibraryKind::oracle && !defines_symbol(syms, "kf_oracle_v1")) {
    out->stage = "load";
    out->status = Status::load_error;
    out->log = "the library defines no kf_oracle_v1: define the oracle with KF_ORACLE(<name>)";
    return true;
  }
  if (kind == LibraryKind::kernel && !defines_symbol(syms, "kf_run")) {
    out->stage = "load";
    out->status = Status::load_error;
    out->log =
        "the library defines no kf_run: declare it extern \"C\" int kf_run(kf::Comm&, "
        "kf::Tensors&) at namespace scope";
    return true;
  }
  out->ok = true;
  return true;
}

}  // namespace

bool build_library(const Toolchain& tc_in, const std::string& source_path, Role role,
                   BuildResult* out, std::string* err, LibraryKind kind) {
  // An oracle is the problem's C++ for kforge-rank: g++ on every backend. It is the
  // problem author's code, not a kernel: the candidates' symbol checks apply (role
  // candidate: no NCCL either), the kernel rules do not.
  const bool oracle = kind == LibraryKind::oracle;
  Toolchain tc = tc_in;
  if (oracle) tc.backend = Backend::host;
  *out = BuildResult{};
  out->file_name = fs::path(source_path).filename().string();
  std::string source;
  if (!read_file(source_path, &source)) {
    *err = source_path + ": cannot read the source";
    return false;
  }
  if (tc.cache_dir.empty()) {
    *err = "build: no cache_dir set in the toolchain";
    return false;
  }
  if (!oracle && !passes_static_checks(tc, source, role, out)) return true;

  const std::string& compiler = tc.backend == Backend::cuda ? tc.nvcc : tc.cxx;
  std::vector<std::string> flags = compile_flags(tc, source, role);
  if (oracle) flags.push_back("-fvisibility=hidden");  // kf_oracle_v1 alone (and in the key)
  out->key = cache_key(tc, source, role, compiler, flags);
  std::string dir = tc.cache_dir + "/" + out->key;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    *err = dir + ": cannot create the cache directory: " + ec.message();
    return false;
  }
  out->lib_path = dir + "/lib.so";
  auto t1 = Clock::now();
  if (fs::exists(out->lib_path))
    out->cached = true;
  else if (!compile_into(tc, compiler, flags, source, role, dir, out, err))
    return false;
  out->compile_s = since(t1);
  if (out->status == Status::compile_error) return true;
  return check_library(role, kind, out, err);
}

}  // namespace sandbox