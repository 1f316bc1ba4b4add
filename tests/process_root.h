// tests/process_root.h: one scratch folder for a test process (its evals, warm sets and
// compile cache), removed when the process exits unless KF_KEEP_TEST_DIRS is set (to look
// at the run folders afterwards).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

struct ProcessRoot {
  std::string path;
  explicit ProcessRoot(const std::string& name) {
    std::string tmpl = "/tmp/" + name + "-XXXXXX";
    path = mkdtemp(tmpl.data()) ? tmpl : "/tmp/" + name;
  }
  ~ProcessRoot() {
    std::error_code ec;
    if (!getenv("KF_KEEP_TEST_DIRS")) std::filesystem::remove_all(path, ec);
  }
  ProcessRoot(const ProcessRoot&) = delete;
  ProcessRoot& operator=(const ProcessRoot&) = delete;
};
