// sandbox/sha256.cpp: SHA-256 through OpenSSL's EVP interface.
#include "sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace sandbox {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
};

namespace {

// OpenSSL fails these only when out of memory or misbuilt; nothing kforge could act on.
void check(int ok, const char* what) {
  if (ok == 1) return;
  std::fprintf(stderr, "kforge: OpenSSL's %s failed (SHA-256)\n", what);
  std::abort();
}

}  // namespace

Sha256::Sha256() : s_(new State) {
  s_->ctx = EVP_MD_CTX_new();
  check(s_->ctx != nullptr, "EVP_MD_CTX_new");
  check(EVP_DigestInit_ex(s_->ctx, EVP_sha256(), nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(s_->ctx);
}

void Sha256::update(const void* data, size_t n) {
  check(EVP_DigestUpdate(s_->ctx, data, n), "EVP_DigestUpdate");
}

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  check(EVP_DigestFinal_ex(s_->ctx, md, &len), "EVP_DigestFinal_ex");
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

std::string sha256_hex(const std::string& data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

}  // namespace sandbox
