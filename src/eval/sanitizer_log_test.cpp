// eval/sanitizer_log_test.cpp
#include "eval/sanitizer_log.h"

#include <doctest/doctest.h>

using namespace eval;

TEST_CASE("sanitizer log: a memcheck report, its file and line, without the host backtrace") {
  const std::string log =
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at sum_kernel(float *, long)+0x70 in /c/src-1.cu:23\n"
      "=========     by thread (255,0,0) in block (4,0,0)\n"
      "=========     Address 0x7f0000000000 is out of bounds\n"
      "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
      "=========         Host Frame: [0x2d3b5f] in libcuda.so.1\n"
      "=========\n"
      "========= ERROR SUMMARY: 1 error\n";
  std::vector<SanitizerFinding> f;
  int errors = 0;
  parse_sanitizer_log(log, 1, &f, &errors);
  REQUIRE(f.size() == 1);
  CHECK(errors == 1);
  CHECK(f[0].rank == 1);
  CHECK(f[0].what == "Invalid __global__ write of size 4 bytes");
  CHECK(f[0].kernel == "sum_kernel(float *, long)");
  CHECK(f[0].file == "/c/src-1.cu");
  CHECK(f[0].line == 23);
  CHECK(f[0].text.find("out of bounds") != std::string::npos);
  CHECK(f[0].text.find("Host Frame") == std::string::npos);
}

TEST_CASE("sanitizer log: no report, and the first with a line is shown first") {
  std::vector<SanitizerFinding> f;
  int errors = -1;
  parse_sanitizer_log("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", 0, &f,
                      &errors);
  CHECK(f.empty());
  CHECK(errors == 0);
  CHECK(first_with_line(f) == nullptr);
  parse_sanitizer_log(
      "========= Program hit cudaErrorIllegalAddress (error 700) on CUDA API call\n"
      "=========\n"
      "========= Error: Race reported between Write access at k(float*)+0x90 in r.cu:7\n"
      "=========     and Read access at k(float*)+0xb0 in r.cu:9 [128 hazards]\n",
      2, &f, &errors);
  REQUIRE(f.size() == 2);
  CHECK(errors == 2);  // no summary: the reports counted
  const SanitizerFinding* first = first_with_line(f);
  REQUIRE(first != nullptr);
  CHECK(first->what.rfind("Race reported between", 0) == 0);
  CHECK(first->file == "r.cu");
  CHECK(first->line == 7);
}
