// suite/topology.h: what the model is told about the machine's GPUs and the links
// between them: detected from nvidia-smi (`topo -m` and `--query-gpu`), read from a JSON
// file for a machine kforge is not running on, or "no GPU" on the host backend.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace suite {

struct Gpu {
  int index = 0;
  std::string name;
  int64_t memory_mib = 0;
};

struct Topology {
  std::string source;  // "nvidia-smi" | the JSON file's path | "none"
  std::vector<Gpu> gpus;
  // links[i][j]: nvidia-smi's word for GPU i to GPU j: X (self), NV<k> (k NVLinks),
  // PIX, PXB, PHB, NODE, SYS (PCIe paths, closest first).
  std::vector<std::vector<std::string>> links;
  bool nvswitch = false;   // every pair joined by the same NVLink count (4+ GPUs): a switch
  bool multicast = false;  // NVLink multicast usable: the machine says so AND the env allows
  std::string note;        // why there is no GPU, or where multicast came from
};

// Parses `nvidia-smi topo -m` output into gpus (indices only) and links. False with
// *err when there is no GPU header row or a row is short.
bool parse_topo_matrix(const std::string& text, Topology* out, std::string* err);

// Parses `nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits`
// (also accepts name,memory.total without the index, and a header line).
bool parse_gpu_query(const std::string& csv, std::vector<Gpu>* out, std::string* err);

// Runs nvidia-smi. False with *err when it is missing or fails.
bool detect_topology(Topology* out, std::string* err);

// {"gpus": [{"name", "memory_mib"}...], "links": [["X","NV18",...],...], "multicast": bool}
// or {"gpus": [...], "nvidia_smi_topo": "<topo -m text>"}. Errors name the file and key.
bool load_topology(const std::string& path, Topology* out, std::string* err);

// What the prompt and the trajectory header carry.
std::string topology_text(const Topology& t);
nlohmann::json topology_json(const Topology& t);

// The host backend's topology: no GPU.
Topology host_topology();

// Fills multicast/nvswitch from links and the environment (NCCL_NVLS_ENABLE).
void finish_topology(Topology* t, bool machine_multicast);

}  // namespace suite
