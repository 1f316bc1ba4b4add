#include "suite/topology.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace {

// What `nvidia-smi topo -m` prints on an 8x H100 SXM node (NVSwitch, 18 NVLinks per GPU),
// with its NICs, affinity columns and legend.
const char* kH100Topo =
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tCPU Affinity\tNUMA "
    "Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tPXB\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNV18\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tSYS\tSYS\t0-55,112-167\t0\t\tN/A\n"
    "GPU4\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tSYS\tPXB\t56-111,168-223\t1\t\tN/A\n"
    "GPU5\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "GPU6\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tNV18\tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "GPU7\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\tNV18\t X \tSYS\tSYS\t56-111,168-223\t1\t\tN/A\n"
    "NIC0\tPXB\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \tSYS\n"
    "NIC1\tSYS\tSYS\tSYS\tSYS\tPXB\tSYS\tSYS\tSYS\tSYS\t X \n"
    "\n"
    "Legend:\n\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., "
    "QPI/UPI)\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n\n"
    "NIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n";

}  // namespace

TEST_CASE("topology: parses an 8x H100 NV18 nvidia-smi topo -m") {
  // (with the escape codes nvidia-smi puts around the header on a terminal)
  std::string text = kH100Topo;
  suite::Topology t;
  std::string err;
  REQUIRE_MESSAGE(suite::parse_topo_matrix(text, &t, &err), err);
  REQUIRE(t.links.size() == 8);
  CHECK(t.gpus.size() == 8);
  CHECK(t.links[0][0] == "X");
  CHECK(t.links[0][1] == "NV18");
  CHECK(t.links[7][6] == "NV18");
  unsetenv("NCCL_NVLS_ENABLE");
  suite::finish_topology(&t, true);
  CHECK(t.nvswitch);
  CHECK_FALSE(t.multicast);  // the machine could, the environment does not allow it
  std::string s = suite::topology_text(t);
  CHECK(s.find("NVSwitch") != std::string::npos);
  CHECK(s.find("multicast: not available") != std::string::npos);
}

TEST_CASE("topology: a PCIe pair is not an NVSwitch; bad matrices are errors") {
  suite::Topology t;
  std::string err;
  REQUIRE(suite::parse_topo_matrix(
      "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-7\nGPU1\tPHB\t X \t0-7\n", &t, &err));
  suite::finish_topology(&t, false);
  CHECK_FALSE(t.nvswitch);
  CHECK(t.links[1][0] == "PHB");
  CHECK_FALSE(suite::parse_topo_matrix("No devices were found\n", &t, &err));
  CHECK(err.find("header") != std::string::npos);
  CHECK_FALSE(suite::parse_topo_matrix("\tGPU0\tGPU1\nGPU0\t X\n", &t, &err));
}

TEST_CASE("topology: gpu query csv, and a JSON file for another machine") {
  std::vector<suite::Gpu> g;
  std::string err;
  REQUIRE(suite::parse_gpu_query("0, NVIDIA H200, 143771\n1, NVIDIA H200, 143771\n", &g, &err));
  REQUIRE(g.size() == 2);
  CHECK(g[1].name == "NVIDIA H200");
  CHECK(g[1].memory_mib == 143771);

  auto dir = std::filesystem::temp_directory_path() / ("kf-topo-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "t.json").string();
  std::ofstream(path) << R"({"gpus": [{"name": "A", "memory_mib": 1}, {"name": "B"}],
                             "links": [["X", "NV4"], ["NV4", "X"]], "multicast": true})";
  suite::Topology t;
  unsetenv("NCCL_NVLS_ENABLE");
  REQUIRE_MESSAGE(suite::load_topology(path, &t, &err), err);
  CHECK(t.gpus[1].name == "B");
  CHECK_FALSE(t.multicast);
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  REQUIRE(suite::load_topology(path, &t, &err));
  CHECK(t.multicast);
  unsetenv("NCCL_NVLS_ENABLE");
  std::ofstream(path) << R"({"links": [["X"]], "gpu": []})";
  CHECK_FALSE(suite::load_topology(path, &t, &err));
  CHECK(err.find("\"gpu\"") != std::string::npos);
  std::filesystem::remove_all(dir);
}
