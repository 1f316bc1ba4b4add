// suite/templates.h: the free choices the expert kernels leave open (mechanism,
// algorithm, blocks, threads, chunk size), as a space of templates the builtin search
// walks. A template is one source file of the problem (solution.cu, solution_ce.cu,
// solution_host.cpp) plus macro values; the file reads each knob with a default
// (#ifndef KF_BLOCKS / #define KF_BLOCKS 32 / #endif), so instantiating is prepending
// #define lines, and a template with no macros is the expert kernel as shipped. Which
// families a problem has, their macros and knobs come from its search.json (search.h);
// the values each knob takes are machine facts and live in templates.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "suite/instance.h"
#include "suite/problem.h"
#include "suite/search.h"

namespace suite {

// What predict() needs beyond a template's knobs: its family's cost terms (search.json,
// the family's over the top-level ones) and the source's defaults for the knobs a
// template leaves unset. A template made by hand has none: predict reports an error.
struct TemplateModel {
  CostTerms cost;
  Expr fallback_when;
  Mech fallback_mech = Mech::reg;
  int default_blocks = 0, default_threads = 0;
  int64_t default_chunk_bytes = 0;
  KnobValues defaults;  // every knob's default (search.json "defaults")
  bool overlap = true;  // the family's: fused (max of the terms) or one after the other (sum)
};

struct Template {
  std::string problem;
  sandbox::Backend backend = sandbox::Backend::cuda;
  std::string source;  // file name in the problem's folder, e.g. "solution.cu"
  std::string mech;    // reg | tma | ce | host: how bytes move
  std::string algo;    // one_shot | two_shot | pull | push | relay: who moves which bytes
  int blocks = 0;      // KF_BLOCKS (the grid's maximum); 0 where the source has none
  int threads = 0;     // KF_THREADS per block; 0 where the source has none
  int64_t chunk = 0;   // KF_CHUNK_BYTES (TMA tile) or KF_CHUNK_ELEMS (host); 0: none
  KnobValues gemm;     // the GEMM knobs it sets (bm, bn, bk, stages, comm_blocks)
  // The search.json-declared knobs it sets (name, value), in the file's order.
  std::vector<std::pair<std::string, int64_t>> declared;
  // What instantiate prepends, in order: ("KF_BLOCKS", "32"), ...
  std::vector<std::pair<std::string, std::string>> macros;
  TemplateModel model;

  // mech/algo: a failure of one instance of a family rules the whole family out.
  std::string family() const;
  // "reg/two_shot blocks=32 threads=512": unique within a problem's space.
  std::string name() const;
  // The value of every knob in force: the template's over the sources' defaults.
  KnobValues knobs() const;
};

// Bytes of tensor `name` on rank 0 of `inst` (0 when it has none by that name).
double tensor_bytes(const Instance& inst, const std::string& name);

// Every template of problem `p` for `backend` at instance `inst` (the world and sizes
// decide nothing yet, but a knob that cannot apply, e.g. TMA tiles larger than the
// message, is left out). Ordered by search.json's families, then knob values; empty for
// a problem without a search.json.
std::vector<Template> template_space(const Problem& p, const Instance& inst,
                                     sandbox::Backend backend);

// `source_text` with a comment naming the template and one #define per macro in front.
std::string instantiate(const Template& t, const std::string& source_text);

// Reads p.dir + "/" + t.source and instantiates it. False with *err naming the file.
bool instantiate_file(const Problem& p, const Template& t, std::string* text, std::string* err);

}  // namespace suite
