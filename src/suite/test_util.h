// suite/test_util.h: helpers for the suite's tests (header only; not part of kforge_core):
// a temporary folder made with mkdtemp, and problem folders written into it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace suite::test {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/kf_suite_XXXXXX";
    const char* p = mkdtemp(tmpl);
    path = p ? p : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Writes root/folder/problem.json with `text` (and stub baseline.cu and oracle.cpp unless
// told not to); returns the folder.
inline std::string write_problem(const std::string& root, const std::string& folder,
                                 const std::string& text, bool with_files = true) {
  std::string dir = root + "/" + folder;
  std::filesystem::create_directories(dir);
  write_file(dir + "/problem.json", text);
  if (with_files) {
    write_file(dir + "/baseline.cu", "// stub\n");
    write_file(dir + "/oracle.cpp", "// stub\n");
  }
  return dir;
}

// The example of problems/README.md.
inline nlohmann::ordered_json all_reduce_json() {
  return nlohmann::ordered_json::parse(R"({
  "name": "all_reduce",
  "category": "collective",
  "mirrors": {"suite": "ParallelKernelBench", "id": 1, "name": "1_allreduce"},
  "description": "Sum x over all ranks into y on every rank.",
  "params": {
    "n":     {"type": "int",   "default": 1048576, "doc": "elements per rank"},
    "dtype": {"type": "dtype", "default": "fp32", "choices": ["fp32", "bf16"]}
  },
  "sizes": {
    "small": {"n": 4099},
    "full":  {"n": 1048576}
  },
  "world": {"min": 1, "max": 64},
  "constraints": [],
  "tensors": [
    {"name": "x", "role": "in",  "dtype": "$dtype", "shape": ["n"],
     "init": {"dist": "uniform", "lo": -1, "hi": 1}},
    {"name": "y", "role": "out", "dtype": "$dtype", "shape": ["n"]}
  ],
  "tolerance": {"fp32": {"atol": 1e-5, "rtol": 1e-5}, "bf16": {"atol": 0.05, "rtol": 0.02}},
  "cost": {
    "comm_bytes": "2 * (world - 1) / world * x_bytes",
    "hbm_bytes":  "(world + 1) * x_bytes",
    "flops":      "(world - 1) * n"
  },
  "busbw": {"bytes": "x_bytes", "factor": "2 * (world - 1) / world"},
  "workspace_bytes": "64 * 2^20"
})");
}

}  // namespace suite::test
