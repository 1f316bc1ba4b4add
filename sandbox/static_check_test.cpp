#include "static_check.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace sandbox;

namespace {
const char* kOk = R"(#include <kf/kf.cuh>
extern "C" int kf_run(kf::Comm& comm, kf::Tensors& t) { return 0; }
)";

std::vector<Finding> check(const std::string& src, Role role = Role::candidate,
                           StaticPolicy pol = StaticPolicy{}) {
  std::vector<Finding> f;
  bool ok = static_check(src, role, pol, &f);
  CHECK(ok == f.empty());
  return f;
}

std::string with(const std::string& body) {
  return std::string(kOk) + body;
}
}  // namespace

TEST_CASE("static_check: a plain candidate passes") {
  CHECK(check(kOk).empty());
}

TEST_CASE("static_check: MPI is rejected with line, why and what to do") {
  auto f = check(with("void g() {\n  MPI_Allreduce(0, 0, 0, 0, 0, 0);\n}\n"));
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "mpi");
  CHECK(f[0].line == 4);
  CHECK(f[0].render() ==
        "kernel.cu:4: uses MPI_Allreduce: candidates may not call MPI; synchronize through "
        "comm.signals and peer memory instead");
  auto g = check(std::string("#include <mpi.h>\n") + kOk);
  REQUIRE(g.size() == 1);
  CHECK(g[0].rule == "mpi");
  CHECK(g[0].line == 1);
}

TEST_CASE("static_check: NCCL is rejected for candidates and allowed for baselines") {
  std::string src = std::string("#include <nccl.h>\n") + kOk +
                    "void g(kf::Comm& c) { ncclAllReduce(0, 0, 0, ncclFloat, ncclSum, "
                    "(ncclComm_t)c.nccl_, 0); }\n";
  auto f = check(src);
  REQUIRE(f.size() >= 2);
  CHECK(f[0].rule == "nccl");
  CHECK(f[0].line == 1);
  CHECK(f[1].line == 4);
  CHECK(f[1].what == "uses ncclAllReduce");
  CHECK(check(src, Role::baseline).empty());
}

TEST_CASE("static_check: multicast is rejected unless the policy allows it") {
  std::string src = with("void g() { CUmulticastObjectProp p; cuMulticastCreate(0, &p); }\n");
  auto f = check(src);
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "multicast");
  CHECK(f[0].render().find("NVLink multicast is off on these machines") != std::string::npos);
  StaticPolicy allow;
  allow.allow_multicast = true;
  CHECK(check(src, Role::candidate, allow).empty());
}

TEST_CASE("static_check: the multicast policy follows NCCL_NVLS_ENABLE") {
  const char* old = getenv("NCCL_NVLS_ENABLE");
  std::string saved = old ? old : "";
  unsetenv("NCCL_NVLS_ENABLE");
  CHECK(!default_static_policy().allow_multicast);
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  CHECK(!default_static_policy().allow_multicast);
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  CHECK(default_static_policy().allow_multicast);
  if (old)
    setenv("NCCL_NVLS_ENABLE", saved.c_str(), 1);
  else
    unsetenv("NCCL_NVLS_ENABLE");
}

TEST_CASE("static_check: process and system escapes") {
  const char* calls[] = {"system(\"ls\")",
                         "popen(\"ls\", \"r\")",
                         "fork()",
                         "vfork()",
                         "execv(0, 0)",
                         "execlp(0, 0)",
                         "posix_spawn(0,0,0,0,0,0)",
                         "dlopen(0, 0)",
                         "dlsym(0, 0)",
                         "socket(0, 0, 0)",
                         "connect(0, 0, 0)",
                         "ptrace(0)",
                         "syscall(1)",
                         "kill(1, 9)",
                         "setenv(0, 0, 1)",
                         "putenv(0)",
                         "std::system(0)"};
  for (const char* c : calls) {
    CAPTURE(c);
    auto f = check(with(std::string("void g() { ") + c + "; }\n"));
    REQUIRE(f.size() == 1);
    CHECK(f[0].rule == "escape");
    CHECK(f[0].line == 3);
  }
  // A member or a variable of the same name is not a call of the libc function.
  CHECK(check(with("struct S { void (*kill)(); }; void g(S s) { s.kill(); int socket = 0; "
                   "(void)socket; }\n"))
            .empty());
  auto ctor = check(with("__attribute__((constructor)) static void init() {}\n"));
  REQUIRE(ctor.size() == 1);
  CHECK(ctor[0].rule == "escape");
  auto dtor = check(with("__attribute__ (( destructor )) static void fini() {}\n"));
  REQUIRE(dtor.size() == 1);
}

TEST_CASE("static_check: timing tampering") {
  const char* uses[] = {"cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)",
                        "k<<<1, 1, 0, cudaStreamPerThread>>>()",
                        "cudaStreamCreateWithPriority(&s, 0, -1)",
                        "cudaDeviceReset()",
                        "cudaSetDevice(0)",
                        "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1)",
                        "a.accessPolicyWindow.num_bytes = 1",
                        "cudaStreamSetAttribute(s, x, &a)",
                        "cudaCtxResetPersistingL2Cache()"};
  for (const char* u : uses) {
    CAPTURE(u);
    auto f = check(with(std::string("void g() {\n") + u + ";\n}\n"));
    REQUIRE(f.size() >= 1);
    CHECK(f[0].rule == "timing");
    CHECK(f[0].line == 4);
  }
  // Events and a stream with default flags are fine.
  CHECK(check(with("void g() { cudaEvent_t e; cudaEventCreate(&e); cudaEventRecord(e, 0); "
                   "cudaStream_t s; cudaStreamCreate(&s); }\n"))
            .empty());
}

TEST_CASE("static_check: include paths") {
  auto f =
      check(std::string("#include \"/etc/passwd\"\n#include \"../secret.h\"\n"
                        "#include <sys/../x.h>\n#include \"helper.h\"\n#include <cub/cub.cuh>\n") +
            kOk);
  REQUIRE(f.size() == 3);
  CHECK(f[0].line == 1);
  CHECK(f[0].what.find("absolute") != std::string::npos);
  CHECK(f[1].line == 2);
  CHECK(f[2].line == 3);
  CHECK(f[1].rule == "include");
}

TEST_CASE("static_check: banned words in comments and strings are not flagged") {
  std::string src = with(
      "// MPI_Allreduce would be easier\n"
      "/* system(\"rm\"); ncclAllReduce\n   cuMulticastCreate */\n"
      "const char* s = \"MPI_Send system(x) cudaSetDevice\";\n"
      "const char* r = R\"x(fork() \"quoted\" MPI_Init)x\";\n"
      "char q = '\\'';\n"
      "int big = 1'000'000;\n"
      "// a continued comment \\\n MPI_Barrier\n"
      "void g() { MPI_Barrier(0); }\n");
  auto f = check(src);
  REQUIRE(f.size() == 1);
  CHECK(f[0].what == "uses MPI_Barrier");
  CHECK(f[0].line == 12);
}

TEST_CASE("static_check: kf_run is required, in code") {
  auto f = check("#include <kf/kf.cuh>\n// kf_run\nint main() { return 0; }\n");
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "entry");
  CHECK(f[0].render().find("defines no kf_run") != std::string::npos);
}

TEST_CASE("static_check: size limit") {
  std::string big = with(std::string(600 * 1024, ' '));
  auto f = check(big);
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "size");
}

TEST_CASE("static_check: stripping keeps lines") {
  std::string s = "a /* x\ny */ b // c\n\"d\" f\n";
  std::string t = strip_comments_and_strings(s);
  CHECK(t.size() == s.size());
  CHECK(std::count(t.begin(), t.end(), '\n') == std::count(s.begin(), s.end(), '\n'));
  CHECK(t.find('x') == std::string::npos);
  CHECK(t.find('c') == std::string::npos);
  CHECK(t.find('f') != std::string::npos);
}

TEST_CASE("static_check: a raw system call in inline assembly") {
  auto f = check(
      with("void g() {\n  asm volatile(\"mov $39, %%eax\\n\"\n \"syscall\" ::: \"rax\");\n}\n"));
  REQUIRE(f.size() == 1);
  CHECK(f[0].rule == "escape");
  CHECK(f[0].line == 4);
  // PTX in a CUDA asm statement is fine.
  CHECK(check(with("__device__ void g(unsigned* p) { asm volatile(\"st.release.sys.global.u32 "
                   "[%0], 1;\" :: \"l\"(p)); }\n"))
            .empty());
}
