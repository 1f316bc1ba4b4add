// pkb/prompt.h: the task text for one PKB problem. PKB's own prompt (its kernelgen/
// prompts.toml) shows the reference and asks for a faster `solution()` with the same
// signature; PKB states the inputs only in code, one branch per problem of
// create_input_tensor in utils/input_output_tensors.py. kforge's prompt carries the same
// information: the reference's source, its signature, that branch as the input
// description, the topology, where kforge's primitives are documented, and the solution
// format PKB's run_local.py loads unchanged.
#pragma once

#include <string>

#include "pkb/checkout.h"

namespace pkb {

struct PromptOptions {
  int world = 0;                   // ranks (GPUs) the candidate runs on; 0: not stated
  std::string topology;            // one line, e.g. "8x H200, NVLink (NV18) between every pair"
  std::string docs;                // kforge's primitives' docs (their text); "": no CUDA section
  std::string dtype = "bfloat16";  // PKB's default (run_local.py --dtype)
};

// `def solution(...) -> ...:` from a reference's source (across lines, as written), or
// "" when it defines none.
std::string solution_signature(const std::string& source);

// The branch of create_input_tensor that makes problem number's inputs, as PKB's
// utils/input_output_tensors.py writes it (`if problem_id == N:` or `problem_id in [..]`
// up to the next branch), or "" when the file has none for it.
std::string input_description(const std::string& inputs_source, int number);

// The prompt for p. False (with *err naming the file) when a file cannot be read or the
// reference defines no solution().
bool build_prompt(const Checkout& c, const Problem& p, const PromptOptions& o, std::string* out,
                  std::string* err);

}  // namespace pkb
