// suite/topology.cpp
#include "suite/topology.h"

#include <fmt/core.h>

#include <fstream>
#include <set>
#include <sstream>

#include "sandbox/process.h"
#include "sandbox/static_check.h"
#include "sandbox/text.h"

namespace suite {

using sandbox::trim;

using nlohmann::json;

namespace {

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

bool gpu_word(const std::string& w, int* index) {
  if (w.size() < 4 || w.compare(0, 3, "GPU") != 0) return false;
  for (size_t i = 3; i < w.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(w[i]))) return false;
  *index = std::stoi(w.substr(3));
  return true;
}

}  // namespace

// nvidia-smi underlines the header row with ANSI escapes when it thinks it is on a
// terminal (a captured tty, `script`): drop them.
static std::string strip_ansi(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && !std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
      i = j;
      continue;
    }
    out += s[i];
  }
  return out;
}

bool parse_topo_matrix(const std::string& raw, Topology* out, std::string* err) {
  std::istringstream in(strip_ansi(raw));
  std::string line;
  int ncols = -1;
  out->links.clear();
  out->gpus.clear();
  while (std::getline(in, line)) {
    auto w = words(line);
    if (w.empty()) continue;
    int idx = 0;
    if (ncols < 0) {
      // The header: GPU0 GPU1 ... then NIC0 / CPU Affinity ...
      if (!gpu_word(w[0], &idx)) continue;
      ncols = 0;
      for (auto& x : w) {
        int k = 0;
        if (!gpu_word(x, &k)) break;
        if (k != ncols)
          return (*err = fmt::format("nvidia-smi topo: header column {} is {}, expected GPU{}",
                                     ncols, x, ncols),
                  false);
        ++ncols;
      }
      continue;
    }
    if (!gpu_word(w[0], &idx)) {
      if (w[0] == "Legend:") break;
      continue;  // NIC rows
    }
    if (static_cast<int>(w.size()) < 1 + ncols)
      return (*err = fmt::format("nvidia-smi topo: row {} has {} cells, expected {}", w[0],
                                 w.size() - 1, ncols),
              false);
    if (idx != static_cast<int>(out->links.size()))
      return (*err = fmt::format("nvidia-smi topo: row {} out of order", w[0]), false);
    out->links.emplace_back(w.begin() + 1, w.begin() + 1 + ncols);
  }
  if (ncols <= 0) return (*err = "nvidia-smi topo: no GPU0 GPU1 ... header row", false);
  if (static_cast<int>(out->links.size()) != ncols)
    return (
        *err = fmt::format("nvidia-smi topo: {} GPU columns but {} rows", ncols, out->links.size()),
        false);
  for (int i = 0; i < ncols; ++i) out->gpus.push_back({i, "", 0});
  return true;
}

bool parse_gpu_query(const std::string& csv, std::vector<Gpu>* out, std::string* err) {
  std::istringstream in(csv);
  std::string line;
  out->clear();
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line.rfind("index", 0) == 0 || line.rfind("name", 0) == 0) continue;
    std::vector<std::string> f;
    std::stringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, ',')) f.push_back(trim(cell));
    Gpu g;
    g.index = static_cast<int>(out->size());
    size_t k = 0;
    if (f.size() >= 3) g.index = std::atoi(f[k++].c_str());
    if (f.size() < 2)
      return (*err = "nvidia-smi --query-gpu: cannot read line '" + line + "'", false);
    g.name = f[k++];
    g.memory_mib = std::atoll(f[k].c_str());  // "81559" or "81559 MiB"
    out->push_back(g);
  }
  return true;
}

void finish_topology(Topology* t, bool machine_multicast) {
  size_t n = t->links.size();
  std::set<std::string> nv;
  bool all_nv = n >= 4;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n && j < t->links[i].size(); ++j)
      if (i != j) {
        const std::string& l = t->links[i][j];
        if (l.rfind("NV", 0) == 0)
          nv.insert(l);
        else
          all_nv = false;
      }
  t->nvswitch = all_nv && nv.size() == 1;
  bool env = sandbox::multicast_allowed_by_env();
  t->multicast = machine_multicast && env;
  if (machine_multicast && !env)
    t->note =
        "NVLink multicast is off: NCCL_NVLS_ENABLE does not allow it (candidates calling "
        "cuMulticast* are rejected)";
  else if (!t->multicast && t->note.empty())
    t->note = "NVLink multicast is not available (candidates calling cuMulticast* are rejected)";
}

bool detect_topology(Topology* out, std::string* err) {
  auto run = [&](std::vector<std::string> argv, std::string* text) {
    sandbox::ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.env = {sandbox::env_entry("PATH")};
    spec.limit_s = 20;
    sandbox::ProcessResult r;
    std::string e;
    if (!sandbox::run_process(spec, &r, &e) || !r.ok()) {
      *err = "cannot run " + spec.argv[0] + " " + spec.argv[1] + ": " +
             (e.empty() ? r.output.substr(0, 200) : e) +
             " (pass --topology FILE to describe the machine)";
      return false;
    }
    *text = r.output;
    return true;
  };
  std::string topo, query;
  if (!run({"nvidia-smi", "topo", "-m"}, &topo)) return false;
  if (!parse_topo_matrix(topo, out, err)) return false;
  if (!run({"nvidia-smi", "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits"},
           &query))
    return false;
  std::vector<Gpu> gpus;
  if (!parse_gpu_query(query, &gpus, err)) return false;
  for (auto& g : gpus)
    if (g.index >= 0 && g.index < static_cast<int>(out->gpus.size())) out->gpus[g.index] = g;
  out->source = "nvidia-smi";
  // The device's multicast attribute is not queried here: report what the policy allows
  // on an NVSwitch machine (finish_topology), and the sandbox enforces the same policy.
  finish_topology(out, false);
  const bool sw = out->nvswitch;
  out->note.clear();
  finish_topology(out, sw);
  return true;
}

bool load_topology(const std::string& path, Topology* out, std::string* err) {
  std::ifstream in(path);
  if (!in) return (*err = path + ": cannot read the topology file", false);
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    return (*err = path + ": not valid JSON: " + e.what(), false);
  }
  try {
    *out = Topology{};
    out->source = path;
    if (j.contains("nvidia_smi_topo")) {
      if (!parse_topo_matrix(j.at("nvidia_smi_topo").get<std::string>(), out, err))
        return (*err = path + ": nvidia_smi_topo: " + *err, false);
    } else if (j.contains("links")) {
      out->links = j.at("links").get<std::vector<std::vector<std::string>>>();
      for (size_t i = 0; i < out->links.size(); ++i) {
        if (out->links[i].size() != out->links.size())
          return (*err = fmt::format("{}: links[{}] has {} entries, expected {}", path, i,
                                     out->links[i].size(), out->links.size()),
                  false);
        out->gpus.push_back({static_cast<int>(i), "", 0});
      }
    } else {
      return (
          *err = path + ": needs \"links\" (a matrix of X/NV18/PIX/SYS...) or \"nvidia_smi_topo\"",
          false);
    }
    if (j.contains("gpus")) {
      auto& g = j.at("gpus");
      if (g.size() != out->links.size())
        return (*err = fmt::format("{}: gpus has {} entries but the link matrix {}", path, g.size(),
                                   out->links.size()),
                false);
      for (size_t i = 0; i < g.size(); ++i) {
        out->gpus[i].name = g[i].value("name", "");
        out->gpus[i].memory_mib = g[i].value("memory_mib", int64_t{0});
      }
    }
    for (auto& [k, v] : j.items())
      if (k != "gpus" && k != "links" && k != "nvidia_smi_topo" && k != "multicast" && k != "name")
        return (*err = path + ": unknown key \"" + k +
                       "\" (known: name, gpus, links, nvidia_smi_topo, multicast)",
                false);
    finish_topology(out, j.value("multicast", false));
  } catch (const json::exception& e) {
    return (*err = path + ": " + e.what(), false);
  }
  return true;
}

Topology host_topology() {
  Topology t;
  t.source = "none";
  t.note = "no GPU (host backend): ranks are processes on the CPU sharing POSIX shared memory";
  return t;
}

std::string topology_text(const Topology& t) {
  if (t.gpus.empty()) return t.note.empty() ? "No GPU.\n" : t.note + "\n";
  std::string s =
      fmt::format("{} GPU{} ({}):\n", t.gpus.size(), t.gpus.size() == 1 ? "" : "s",
                  t.source == "nvidia-smi" ? "detected with nvidia-smi" : "from " + t.source);
  for (auto& g : t.gpus)
    s += fmt::format("  GPU{}: {}{}\n", g.index, g.name.empty() ? "(name unknown)" : g.name,
                     g.memory_mib > 0 ? fmt::format(", {} MiB", g.memory_mib) : "");
  if (t.links.size() > 1) {
    s += "Links between GPUs (NV<k>: k NVLinks; PIX/PXB: PCIe switch; PHB: host bridge; NODE/SYS: "
         "across the CPU):\n      ";
    for (size_t j = 0; j < t.links.size(); ++j)
      s += fmt::format("{:>6}", "GPU" + std::to_string(j));
    s += "\n";
    for (size_t i = 0; i < t.links.size(); ++i) {
      s += fmt::format("{:<6}", "GPU" + std::to_string(i));
      for (auto& l : t.links[i]) s += fmt::format("{:>6}", l);
      s += "\n";
    }
    if (t.nvswitch)
      s += "Every pair has the same NVLink count: the GPUs sit on an NVSwitch (all-to-all at full "
           "link rate).\n";
  }
  s += std::string("NVLink multicast: ") + (t.multicast ? "available" : "not available") + "\n";
  if (!t.note.empty() && !t.multicast) s += t.note + "\n";
  return s;
}

json topology_json(const Topology& t) {
  json g = json::array();
  for (auto& x : t.gpus)
    g.push_back({{"index", x.index}, {"name", x.name}, {"memory_mib", x.memory_mib}});
  return {{"source", t.source},       {"gpus", g},     {"links", t.links}, {"nvswitch", t.nvswitch},
          {"multicast", t.multicast}, {"note", t.note}};
}

}  // namespace suite
