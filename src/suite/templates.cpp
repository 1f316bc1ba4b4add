// suite/templates.cpp: the knobs of each problem's expert kernels and their values.
#include "suite/templates.h"

#include <fstream>
#include <sstream>

namespace suite {

namespace {

// Values the search tries. Blocks: from a latency-bound few up to about one per SM of
// an H200 (132); TMA saturates NVLink near 15 SMs and register ops near 76 (PK), so
// both ends of that range are in. Threads: the expert kernels' 512 and half of it.
const int kBlocks[] = {8, 16, 32, 64, 128};
const int kThreads[] = {256, 512};
// TMA tiles: two in flight in static shared memory (48 KB limit), 16-byte multiples,
// and PK's 2 KB saturation point is below the smallest.
const int64_t kTmaTiles[] = {4096, 8192, 16384};
// Host chunks (elements per step); correctness must not depend on it, so the space
// includes one that rarely divides n.
const int64_t kHostChunks[] = {1000, 65536};

struct Family {
  std::string source, mech, algo;
  bool blocks = true, threads = true, tma_tile = false, host_chunk = false;
};

std::vector<Family> families(const std::string& problem, const std::string& backend) {
  std::vector<Family> f;
  if (backend == "host") {
    // Every host problem has the same two knobs: who moves the bytes and the chunk.
    for (const char* a : {"pull", "push"}) {
      Family h{"solution_host.cpp", "host", a};
      h.blocks = h.threads = false;
      h.host_chunk = true;
      f.push_back(h);
    }
    return f;
  }
  if (problem == "all_reduce") {
    f.push_back({"solution.cu", "reg", "one_shot"});
    f.push_back({"solution.cu", "reg", "two_shot"});
  } else if (problem == "reduce_scatter") {
    f.push_back({"solution.cu", "reg", "pull"});
  } else if (problem == "all_gather") {
    Family t{"solution.cu", "tma", "push"};
    t.threads = false;  // one thread issues the TMA; the others only do the tail
    t.tma_tile = true;
    f.push_back(t);
    f.push_back({"solution.cu", "reg", "push"});
    f.push_back({"solution_ce.cu", "ce", "push", false, false});
  } else if (problem == "all_to_all") {
    f.push_back({"solution.cu", "reg", "push"});
    f.push_back({"solution.cu", "reg", "pull"});
  } else if (problem == "broadcast") {
    f.push_back({"solution.cu", "reg", "pull"});
    f.push_back({"solution.cu", "reg", "relay"});
    f.push_back({"solution_ce.cu", "ce", "pull", false, false});
  }
  return f;
}

// The macro that selects the family inside a source with several.
void family_macros(const std::string& problem, const Family& f, Template* t) {
  if (f.source == "solution_ce.cu") return;  // one family per file: nothing to select
  if (f.mech == "host" || problem == "all_reduce" || problem == "all_to_all" ||
      problem == "broadcast")
    t->macros.emplace_back("KF_ALGO", f.algo);
  if (problem == "all_gather" && f.mech != "host") t->macros.emplace_back("KF_MECH", f.mech);
}

}  // namespace

double tensor_bytes(const Instance& inst, const std::string& name) {
  for (const sandbox::JobTensor& t : inst.tensors) {
    if (t.name != name || t.shape_by_rank.empty()) continue;
    double n = 1;
    for (int64_t d : t.shape_by_rank[0]) n *= static_cast<double>(d);
    return n * static_cast<double>(kf::dtype_size(t.dtype));
  }
  return 0;
}

std::string Template::family() const { return mech + "/" + algo; }

std::string Template::name() const {
  std::string s = family();
  if (blocks > 0) s += " blocks=" + std::to_string(blocks);
  if (threads > 0) s += " threads=" + std::to_string(threads);
  if (chunk > 0) s += (mech == "host" ? " chunk_elems=" : " chunk_bytes=") + std::to_string(chunk);
  return s;
}

std::vector<Template> template_space(const Problem& p, const Instance& inst,
                                     const std::string& backend) {
  std::vector<Template> out;
  const double x_bytes = tensor_bytes(inst, "x");
  for (const Family& f : families(p.name, backend)) {
    Template base;
    base.problem = p.name;
    base.backend = backend;
    base.source = f.source;
    base.mech = f.mech;
    base.algo = f.algo;
    family_macros(p.name, f, &base);
    std::vector<int> blocks = f.blocks ? std::vector<int>(std::begin(kBlocks), std::end(kBlocks))
                                       : std::vector<int>{0};
    std::vector<int> threads = f.threads
                                   ? std::vector<int>(std::begin(kThreads), std::end(kThreads))
                                   : std::vector<int>{0};
    std::vector<int64_t> chunks{0};
    if (f.tma_tile) {
      chunks.clear();
      for (int64_t c : kTmaTiles)  // a tile larger than the message would never be used
        if (c <= x_bytes || c == kTmaTiles[0]) chunks.push_back(c);
    }
    if (f.host_chunk) chunks.assign(std::begin(kHostChunks), std::end(kHostChunks));
    for (int b : blocks)
      for (int th : threads)
        for (int64_t c : chunks) {
          Template t = base;
          t.blocks = b;
          t.threads = th;
          t.chunk = c;
          if (b > 0) t.macros.emplace_back("KF_BLOCKS", std::to_string(b));
          if (th > 0) t.macros.emplace_back("KF_THREADS", std::to_string(th));
          if (c > 0)
            t.macros.emplace_back(f.host_chunk ? "KF_CHUNK_ELEMS" : "KF_CHUNK_BYTES",
                                  std::to_string(c));
          out.push_back(t);
        }
  }
  return out;
}

std::string instantiate(const Template& t, const std::string& source_text) {
  std::ostringstream o;
  o << "// kforge template " << t.problem << " " << t.name() << " (from " << t.source
    << "; the #defines below set the expert kernel's knobs)\n";
  for (const auto& [k, v] : t.macros) o << "#define " << k << " " << v << "\n";
  o << source_text;
  return o.str();
}

bool instantiate_file(const Problem& p, const Template& t, std::string* text, std::string* err) {
  const std::string path = p.dir + "/" + t.source;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = "cannot read template source " + path + ": the problem folder lacks " + t.source;
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *text = instantiate(t, s.str());
  return true;
}

}  // namespace suite
