// sandbox/sha256.h: SHA-256, for the build cache's keys and the trajectories' candidate
// hashes: OpenSSL's libcrypto (Debian's libssl-dev) behind a small interface.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace sandbox {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t n);
  void update(const std::string& s) { update(s.data(), s.size()); }
  // The digest as 64 lowercase hex digits. The object is spent afterwards.
  std::string hex_digest();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

std::string sha256_hex(const std::string& data);

}  // namespace sandbox
