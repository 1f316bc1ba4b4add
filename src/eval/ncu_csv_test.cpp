// eval/ncu_csv_test.cpp
#include "eval/ncu_csv.h"

#include <doctest/doctest.h>

using namespace eval;

TEST_CASE("ncu csv: quoted fields, doubled quotes and commas inside quotes") {
  auto f = split_csv_line(R"("a","b,c","d""e",,"f")");
  REQUIRE(f.size() == 5);
  CHECK(f[0] == "a");
  CHECK(f[1] == "b,c");
  CHECK(f[2] == "d\"e");
  CHECK(f[3] == "");
  CHECK(f[4] == "f");
}

TEST_CASE("ncu csv: numbers with thousands separators; words are no numbers") {
  double v = 0;
  CHECK(parse_metric_number("1,664", &v));
  CHECK(v == 1664);
  CHECK(parse_metric_number("12.5", &v));
  CHECK(v == 12.5);
  CHECK_FALSE(parse_metric_number("n/a", &v));
  CHECK_FALSE(parse_metric_number("", &v));
  CHECK(to_base_unit(2.5, "usecond") == 2500);
  CHECK(to_base_unit(3, "Kbyte") == 3000);
  CHECK(to_base_unit(41, "%") == 41);
}

TEST_CASE("ncu csv: rows group by launch ID; the runner's kernels are the candidate's") {
  const std::string csv =
      "==PROF== Connected to process 12 (/x/kforge-rank)\n"
      R"x("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value")x"
      "\n"
      R"x("0","31","kforge-runner","h","sum_kernel(kf::Peers<const float>, float*, long, int)","1","7","(256, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","1,664")x"
      "\n"
      R"x("0","31","kforge-runner","h","sum_kernel(kf::Peers<const float>, float*, long, int)","1","7","(256, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","launch__grid_size","","1,024")x"
      "\n"
      R"x("1","30","kforge-rank","h","ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)","1","13","(544, 1, 1)","(1, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","usecond","2.5")x"
      "\n";
  std::vector<KernelProfile> k;
  std::string err;
  REQUIRE(parse_ncu_csv(csv, 3, sandbox::Role::baseline, &k, &err));
  REQUIRE(k.size() == 2);
  CHECK(k[0].rank == 3);
  CHECK(k[0].side == sandbox::Role::candidate);
  CHECK(k[0].block == "(256, 1, 1)");
  CHECK(k[0].get("gpu__time_duration.sum") == 1664);
  CHECK(k[0].get("launch__grid_size") == 1024);
  CHECK(k[0].get("dram__throughput.avg.pct_of_peak_sustained_elapsed") == -1);
  CHECK(k[1].side == sandbox::Role::baseline);
  CHECK(k[1].get("gpu__time_duration.sum") == 2500);
}

TEST_CASE("ncu csv: output without the header is an error that says what is missing") {
  std::vector<KernelProfile> k;
  std::string err;
  CHECK_FALSE(
      parse_ncu_csv("==PROF== No kernels were profiled.\n", 0, sandbox::Role::baseline, &k, &err));
  CHECK(err.find("Metric Name") != std::string::npos);
}
