// tests/has.h: "does this text contain that", which most test files ask; one definition,
// so that the test files can be compiled in unity batches (CMakeLists.txt).
#pragma once

#include <doctest/doctest.h>

#include <string>

inline bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The same, as a check that shows both texts when it fails.
inline bool check_has(const std::string& s, const std::string& part) {
  INFO("message: ", s);
  INFO("expected to contain: ", part);
  bool ok = has(s, part);
  CHECK(ok);
  return ok;
}
