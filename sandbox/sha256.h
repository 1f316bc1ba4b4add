// sandbox/sha256.h: SHA-256 (FIPS 180-4), for the compile cache's keys. Written here so
// that the sandbox needs no crypto library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sandbox {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(const std::string& s) { update(s.data(), s.size()); }
  // The digest as 64 lowercase hex digits. The object is spent afterwards.
  std::string hex_digest();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes
};

std::string sha256_hex(const std::string& data);

}  // namespace sandbox
