// suite/search.h: problems/<name>/search.json, the part of a problem that describes its
// expert kernels rather than the task: their free choices as families of templates the
// builtin search walks (suite/templates.h), each family's terms of the cost model
// (suite/analysis.h), and the algorithm advice the prompt's analysis carries. Optional: a
// problem without one has no templates and no advice. It stays out of the agent's jail,
// like the solutions it describes. Format: problems/README.md, "search.json".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sandbox/job_enums.h"
#include "suite/expr.h"

namespace suite {

struct Problem;
struct Instance;

// How a kernel moves bytes: register loads and stores, TMA, the copy engine, or the host
// backend's plain C++. The cost model has a rate for each (analysis.h).
enum class Mech { reg, tma, ce, host };
// The knobs a source reads with a default (#ifndef KF_BLOCKS / #define KF_BLOCKS 32).
// Their values are machine facts and live in templates.cpp; which apply is per family.
// A GEMM family (one with a flops term) also has its tile (bm x bn, k steps of bk through
// `stages` buffers) and, for an inter-SM schedule, the blocks that only communicate.
enum class Knob { blocks, threads, chunk_bytes, chunk_elems, bm, bn, bk, stages, comm_blocks };
using KnobValues = std::map<Knob, int64_t>;

const char* mech_name(Mech m);  // "reg", as search.json writes it
bool parse_mech(const std::string& s, Mech* out);
const char* knob_name(Knob k);   // "blocks", as search.json writes it
const char* knob_macro(Knob k);  // "KF_BLOCKS", what the source reads
bool parse_knob(const std::string& s, Knob* out);
const std::vector<Knob>& all_knobs();  // in declaration order
// Whether a mechanism's kernels read knob k, as the cost model understands them.
bool knob_applies(Mech m, Knob k);
// A source's knob defaults: every "#ifndef NAME" whose next line is "#define NAME VALUE",
// NAME -> VALUE (its first token; empty when there is none).
std::map<std::string, std::string> source_defines(const std::string& text);
std::string knob_list();  // "blocks, threads, ...", for messages

// A family's terms of the cost model: expressions over problem.json's cost names (numeric
// parameters, world, dsize, <tensor>_numel, <tensor>_bytes of rank 0). An empty term takes
// the file's top-level "cost", and failing that the default noted here.
struct CostTerms {
  Expr comm_bytes;  // over the busiest link direction of one rank; default problem.json's
  Expr hbm_bytes;   // one rank's HBM traffic; default problem.json's
  Expr work;        // 16-byte vectors the grid strides over; reg, tma and host need it
  Expr hops;        // link traversals on the critical path; default 1 for push, else 2
  Expr msg_bytes;   // bytes per copy-engine call; ce needs it
  Expr ce_calls;    // copy-engine calls per run; default 1
  Expr flops;       // a fused GEMM's flops per rank; default 0 (no compute term)
  Expr tiles;       // the GEMM's output tiles per rank; a family with flops needs it
};

// A knob a problem declares in its search.json ("knobs": {"unroll": {"macro": "KF_UNROLL",
// "values": [1, 2, 4]}}): the search tries each value, the source reads it with a default
// like the built-in knobs, and the cost model knows nothing of it (its templates predict
// alike, and the measurements rank them).
struct DeclaredKnob {
  std::string name;   // as families' "knobs" lists name it
  std::string macro;  // what the source reads
  std::vector<int64_t> values;
};

struct Family {
  std::string source;  // a file in the problem's folder, e.g. solution.cu
  Mech mech = Mech::reg;
  std::string algo;  // who moves which bytes: one_shot, pull, push, relay, ...
  std::vector<std::pair<std::string, std::string>> macros;  // what selects it in the source
  std::vector<Knob> knobs;  // what the search varies (defined blocks, threads, then chunk)
  std::vector<std::string> declared;  // the search.json-declared knobs it varies, by name
  CostTerms cost;                     // the family's terms over the file's top-level ones
  Expr fallback_when;  // non-zero: the source takes fallback_mech instead (empty: never)
  Mech fallback_mech = Mech::reg;
  // The GEMM and the communication overlap (a fused kernel: T takes their max) or run one
  // after the other (the unfused GEMM, then the collective: T takes their sum).
  bool overlap = true;
  bool has(Knob k) const;
  sandbox::Backend backend() const {
    return mech == Mech::host ? sandbox::Backend::host : sandbox::Backend::cuda;
  }
};

// A placeholder of the advice text: {name} becomes `bytes` formatted as bytes, or
// then_text where `cond` is non-zero and else_text where it is zero.
struct AdviceValue {
  std::string name;
  Expr bytes;
  Expr cond;
  std::string then_text, else_text;
};

struct SearchSpec {
  std::string file;                    // dir/search.json; empty: the problem has none
  KnobValues defaults;                 // the sources' #define values
  std::vector<Family> families;        // in file order: the search's order for equal times
  std::vector<DeclaredKnob> declared;  // the file's own knobs ("knobs"), in file order
  std::string advice;                  // one line of the analysis; empty: none
  std::vector<AdviceValue> advice_values;
  int64_t default_of(Knob k) const;                                  // 0 where none is declared
  const DeclaredKnob* find_declared(const std::string& name) const;  // null: none
};

// Reads p.dir/search.json into *out when the file exists (else leaves out->file empty)
// and checks it against `p`: the format, that sources and macros exist, that every knob's
// default equals the source's #define, and a dry run of every expression at the small and
// full sizes. Errors name the file and the field path, e.g. "families[1].mech".
bool load_search(const Problem& p, SearchSpec* out, std::string* err);

// A family's cost terms at one instance, the defaults filled in. `knobs` are the values
// in force (a template's over the sources' defaults): expressions may name them (bm, bn,
// comm_blocks, ...), e.g. tiles = "ceil_div(M, bm) * ceil_div(N, bn)".
struct TermValues {
  double comm_bytes = 0, hbm_bytes = 0, work = 0, hops = 0, msg_bytes = 0, ce_calls = 0;
  double flops = 0, tiles = 0;
  bool fallback = false;  // fallback_when holds: the source takes the fallback mechanism
};
bool eval_terms(const CostTerms& c, const Expr& fallback_when, const std::string& algo,
                const Instance& inst, const KnobValues& knobs, TermValues* out, std::string* err);

// Copies `text` with every {name} replaced by value(name); false with *err when a brace
// marks no placeholder or value() fails (it sets *err).
bool fill_placeholders(const std::string& text,
                       const std::function<bool(const std::string&, std::string*)>& value,
                       std::string* out, std::string* err);

// The advice text with its placeholders filled at `inst`; `bytes` formats a byte count.
// Errors name the field (advice.values.NAME), not the file.
bool render_advice(const SearchSpec& s, const Instance& inst, std::string (*bytes)(double),
                   std::string* out, std::string* err);

}  // namespace suite
