// A problem's oracle built from its folder and called through the C ABI, as kforge-rank
// does: values, parameters and shapes arrive, outputs come back only on success, and a
// bad oracle (a compile error, a missing file, a forbidden import) gets a message that
// names the file and says what to do.
#include "oracle.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "build.h"
#include "kf_build_paths.h"

using namespace sandbox;
namespace fs = std::filesystem;

namespace {

// A problem folder holding only `oracle` as its oracle.cpp, and a toolchain whose cache
// lies beside it.
struct Folder {
  std::string root, dir;
  Toolchain tc;
  explicit Folder(const std::string& oracle) {
    char tmpl[] = "/tmp/kf-oracle-test-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    root = tmpl;
    dir = root + "/my_problem";
    fs::create_directories(dir);
    std::ofstream(dir + "/oracle.cpp") << oracle;
    tc.backend = Backend::cuda;  // an oracle is g++'s whatever the backend
    tc.include_dir = KF_SOURCE_ROOT "/primitives/include";
    tc.cache_dir = root + "/cache";
  }
  ~Folder() { fs::remove_all(root); }
};

// y[i] = scale * (x of rank 0 + x of rank 1)[i] + rank; "mode" must be "sum"; the shape of
// y on rank 1 is its length.
const char* kSum = R"(#include "kf/oracle.h"
KF_ORACLE(my_problem) {
  if (io.str_params.at("mode") != "sum") { *err = "mode must be sum"; return false; }
  std::vector<double>& y = io.out("y");
  if (io.shape("y", 1).at(0) != static_cast<int64_t>(y.size())) { *err = "shape"; return false; }
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = io.param("scale") * (io.input("x", 0)[i] + io.input("x", 1)[i]) + io.rank;
  return true;
}
)";

struct Io {
  std::vector<std::vector<double>> x = {{1, 2, 3}, {10, 20, 30}};
  std::vector<int64_t> shape = {3};
  std::vector<double> y = std::vector<double>(3, NAN);
  OracleIO io;
  Io() {
    io.world = 2;
    io.rank = 1;
    io.params = {{"scale", 2}};
    io.str_params = {{"mode", "sum"}};
    io.input = [this](const std::string& name, int r) -> const std::vector<double>& {
      if (name != "x") throw std::runtime_error("the oracle asked for tensor '" + name + "'");
      return x.at(static_cast<size_t>(r));
    };
    io.shape = [this](const std::string&, int) -> const std::vector<int64_t>& { return shape; };
    io.out = [this](const std::string& name) -> std::vector<double>& {
      if (name != "y") throw std::runtime_error("the oracle wrote '" + name + "'");
      return y;
    };
  }
};

bool build_and_open(Folder& f, Oracle* o, std::string* err) {
  BuildResult b;
  return build_oracle(f.tc, f.dir, &b, err) && o->open(b.lib_path, err);
}

}  // namespace

TEST_CASE("oracle: built from the folder, called through its C entry point, then cached") {
  Folder f(kSum);
  Oracle o;
  std::string err;
  REQUIRE_MESSAGE(build_and_open(f, &o, &err), err);
  Io io;
  REQUIRE_MESSAGE(o.call(io.io, &err), err);
  CHECK(io.y == std::vector<double>{23, 45, 67});
  BuildResult again;
  REQUIRE(build_oracle(f.tc, f.dir, &again, &err));
  CHECK(again.cached);
}

TEST_CASE("oracle: a refusal or a bad name comes back as the message; outputs stay unwritten") {
  Folder f(kSum);
  Oracle o;
  std::string err;
  REQUIRE_MESSAGE(build_and_open(f, &o, &err), err);
  Io refused;
  refused.io.str_params["mode"] = "max";
  CHECK_FALSE(o.call(refused.io, &err));
  CHECK(err == "mode must be sum");
  CHECK(std::isnan(refused.y[0]));
  Io missing;
  missing.io.input = [&](const std::string& name, int) -> const std::vector<double>& {
    throw std::runtime_error("the oracle asked for tensor '" + name + "', which the job lacks");
  };
  CHECK_FALSE(o.call(missing.io, &err));
  CHECK(err == "the oracle asked for tensor 'x', which the job lacks");
  CHECK(std::isnan(missing.y[0]));
}

TEST_CASE("oracle: a compile error names the file and says what to do") {
  Folder f("#include \"kf/oracle.h\"\nKF_ORACLE(my_problem) { return undeclared_thing; }\n");
  BuildResult b;
  std::string err;
  CHECK_FALSE(build_oracle(f.tc, f.dir, &b, &err));
  CHECK(b.status == Status::compile_error);
  CHECK(err.find(f.dir + "/oracle.cpp does not build") != std::string::npos);
  CHECK(err.find("undeclared_thing") != std::string::npos);
  CHECK(err.find("fix the file") != std::string::npos);
  CHECK(err.find("needs no rebuild") != std::string::npos);
}

TEST_CASE("oracle: a folder without oracle.cpp, or one without KF_ORACLE, is named") {
  Folder f("int unrelated() { return 1; }\n");
  BuildResult b;
  std::string err;
  CHECK_FALSE(build_oracle(f.tc, f.dir, &b, &err));
  CHECK(err.find("defines no kf_oracle_v1") != std::string::npos);
  fs::remove(f.dir + "/oracle.cpp");
  CHECK_FALSE(build_oracle(f.tc, f.dir, &b, &err));
  CHECK(err.find(f.dir + "/oracle.cpp: no such file") != std::string::npos);
  Oracle o;
  CHECK_FALSE(o.open(f.root + "/nothing.so", &err));
  CHECK(err.find(f.root + "/nothing.so: cannot load the oracle") == 0);
}

TEST_CASE("oracle: the candidates' import rules hold for an oracle (it runs in kforge-rank)") {
  Folder f(R"(#include "kf/oracle.h"
#include <cstdlib>
KF_ORACLE(my_problem) { return std::system("true") == 0; }
)");
  BuildResult b;
  std::string err;
  CHECK_FALSE(build_oracle(f.tc, f.dir, &b, &err));
  CHECK(b.status == Status::rejected);
  CHECK(err.find("imports system") != std::string::npos);
}
