// suite/templates.cpp: the values of the expert kernels' knobs, and the template space of a
// problem's search.json families.
#include "suite/templates.h"

#include <fmt/format.h>

#include <algorithm>
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
// GEMM tiles of kf::TileGemm's 2 x 2 warps: 64 or 128 rows and columns (multiples of 32),
// k steps of 32 or 64, 2 or 3 pipeline stages; at 128 x 128 x 64 x 3 the pipeline takes
// 96 KB of the 227 KB shared memory. Communication blocks of an inter-SM schedule: TMA
// saturates NVLink near 15 SMs [PK], so 4, 8 and 16 bracket it.
const int64_t kTileM[] = {64, 128};
const int64_t kTileN[] = {64, 128};
const int64_t kTileK[] = {32, 64};
const int64_t kStages[] = {2, 3};
const int64_t kCommBlocks[] = {4, 8, 16};

std::vector<int64_t> gemm_values(Knob k) {
  switch (k) {
    case Knob::bm:
      return {std::begin(kTileM), std::end(kTileM)};
    case Knob::bn:
      return {std::begin(kTileN), std::end(kTileN)};
    case Knob::bk:
      return {std::begin(kTileK), std::end(kTileK)};
    case Knob::stages:
      return {std::begin(kStages), std::end(kStages)};
    case Knob::comm_blocks:
      return {std::begin(kCommBlocks), std::end(kCommBlocks)};
    default:
      return {};
  }
}

// Every combination of the GEMM knobs the family varies ({{}} where it varies none).
// Every combination of the family's declared knobs' values (one empty one for none), each
// as (name, value) and (macro, value) pairs, in the file's order.
struct DeclaredSet {
  std::vector<std::pair<std::string, int64_t>> values;
  std::vector<std::pair<std::string, std::string>> macros;
};
std::vector<DeclaredSet> declared_space(const SearchSpec& s, const Family& f) {
  std::vector<DeclaredSet> out = {{}};
  for (const DeclaredKnob& d : s.declared) {
    if (std::find(f.declared.begin(), f.declared.end(), d.name) == f.declared.end()) continue;
    std::vector<DeclaredSet> next;
    for (const DeclaredSet& set : out)
      for (int64_t v : d.values) {
        DeclaredSet more = set;
        more.values.emplace_back(d.name, v);
        more.macros.emplace_back(d.macro, std::to_string(v));
        next.push_back(std::move(more));
      }
    out = std::move(next);
  }
  return out;
}

std::vector<KnobValues> gemm_space(const Family& f) {
  std::vector<KnobValues> out = {{}};
  for (Knob k : {Knob::bm, Knob::bn, Knob::bk, Knob::stages, Knob::comm_blocks}) {
    if (!f.has(k)) continue;
    std::vector<KnobValues> next;
    for (const KnobValues& kv : out)
      for (int64_t v : gemm_values(k)) {
        next.push_back(kv);
        next.back()[k] = v;
      }
    out = std::move(next);
  }
  return out;
}

TemplateModel model_of(const SearchSpec& s, const Family& f) {
  TemplateModel m;
  m.cost = f.cost;
  m.fallback_when = f.fallback_when;
  m.fallback_mech = f.fallback_mech;
  m.default_blocks = static_cast<int>(s.default_of(Knob::blocks));
  m.default_threads = static_cast<int>(s.default_of(Knob::threads));
  m.default_chunk_bytes = s.default_of(Knob::chunk_bytes);
  m.defaults = s.defaults;
  m.overlap = f.overlap;
  return m;
}

// The TMA tiles worth trying at `inst`: a tile larger than the bytes a rank moves would
// never be used (the smallest is always kept). Where the work cannot be evaluated all
// are kept, and predict() reports the error.
std::vector<int64_t> tma_tiles(const TemplateModel& m, const std::string& algo,
                               const Instance& inst) {
  TermValues v;
  std::string err;
  const bool known = eval_terms(m.cost, m.fallback_when, algo, inst, m.defaults, &v, &err);
  std::vector<int64_t> out;
  for (int64_t c : kTmaTiles)
    if (!known || c <= v.work * 16 || c == kTmaTiles[0]) out.push_back(c);
  return out;
}

template <typename T, size_t N>
std::vector<T> values_or_none(bool on, const T (&values)[N]) {
  return on ? std::vector<T>(std::begin(values), std::end(values)) : std::vector<T>{0};
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

std::string Template::family() const {
  return mech + "/" + algo;
}

std::string Template::name() const {
  std::string s = family();
  if (blocks > 0) s += " blocks=" + std::to_string(blocks);
  if (threads > 0) s += " threads=" + std::to_string(threads);
  for (const auto& [k, v] : gemm) s += fmt::format(" {}={}", knob_name(k), v);
  if (chunk > 0) s += (mech == "host" ? " chunk_elems=" : " chunk_bytes=") + std::to_string(chunk);
  for (const auto& [name, v] : declared) s += fmt::format(" {}={}", name, v);
  return s;
}

KnobValues Template::knobs() const {
  KnobValues k = model.defaults;
  for (const auto& [knob, v] : gemm) k[knob] = v;
  if (blocks > 0) k[Knob::blocks] = blocks;
  if (threads > 0) k[Knob::threads] = threads;
  if (chunk > 0) k[mech == "host" ? Knob::chunk_elems : Knob::chunk_bytes] = chunk;
  return k;
}

std::vector<Template> template_space(const Problem& p, const Instance& inst,
                                     sandbox::Backend backend) {
  std::vector<Template> out;
  for (const Family& f : p.search.families) {
    if (backend != f.backend()) continue;
    Template base;
    base.problem = p.name;
    base.backend = backend;
    base.source = f.source;
    base.mech = mech_name(f.mech);
    base.algo = f.algo;
    base.macros = f.macros;
    base.model = model_of(p.search, f);
    const std::vector<int> blocks = values_or_none(f.has(Knob::blocks), kBlocks);
    const std::vector<int> threads = values_or_none(f.has(Knob::threads), kThreads);
    std::vector<int64_t> chunks = values_or_none(f.has(Knob::chunk_elems), kHostChunks);
    if (f.has(Knob::chunk_bytes)) chunks = tma_tiles(base.model, f.algo, inst);
    const Knob chunk_knob = f.has(Knob::chunk_elems) ? Knob::chunk_elems : Knob::chunk_bytes;
    const std::vector<DeclaredSet> declared = declared_space(p.search, f);
    for (int b : blocks)
      for (int th : threads)
        for (const KnobValues& g : gemm_space(f))
          for (int64_t c : chunks)
            for (const DeclaredSet& d : declared) {
              Template t = base;
              t.blocks = b;
              t.threads = th;
              t.gemm = g;
              t.chunk = c;
              t.declared = d.values;
              if (b > 0) t.macros.emplace_back(knob_macro(Knob::blocks), std::to_string(b));
              if (th > 0) t.macros.emplace_back(knob_macro(Knob::threads), std::to_string(th));
              for (const auto& [k, v] : g) t.macros.emplace_back(knob_macro(k), std::to_string(v));
              if (c > 0) t.macros.emplace_back(knob_macro(chunk_knob), std::to_string(c));
              t.macros.insert(t.macros.end(), d.macros.begin(), d.macros.end());
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
