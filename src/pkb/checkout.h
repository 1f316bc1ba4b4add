// pkb/checkout.h: a user's ParallelKernelBench checkout (never copied into kforge, never
// downloaded by it): its problems, reference/<N>_<name>.py, and how a user names them.
// PKB names a problem by number (`16`), by stem (`16_gemm_reducescatter`, with or without
// `.py`), every problem as `all`, and several as a bracket list (`[20, 21, 22]`, its
// kernelgen's form); kforge also takes ranges and comma lists (`1-5,16`).
#pragma once

#include <string>
#include <vector>

namespace pkb {

struct Problem {
  int number = 0;         // the stem's leading digits
  std::string name;       // the stem, e.g. "16_gemm_reducescatter"
  std::string reference;  // the reference file's absolute path
};

struct Checkout {
  std::string root;               // the checkout's directory
  std::vector<Problem> problems;  // by number, then name
};

// The files that make a directory a PKB checkout (relative to its root).
extern const char* const kRequiredFiles[];

// Opens the checkout at path: its reference/ folder and the files PKB's harness needs.
// False (with *err naming path and the missing file) when path is not a PKB checkout.
bool open_checkout(const std::string& path, Checkout* out, std::string* err);

// The problems spec names, in the checkout's order, without duplicates: a number, a
// stem, `all`, a range `A-B`, or a list of those separated by commas, with or without
// PKB's brackets. False (with *err naming the part that matched nothing) otherwise.
bool select_problems(const Checkout& c, const std::string& spec, std::vector<Problem>* out,
                     std::string* err);

// One problem, as select_problems names it; false unless spec names exactly one.
bool find_problem(const Checkout& c, const std::string& spec, Problem* out, std::string* err);

}  // namespace pkb
