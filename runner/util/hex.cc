#include "runner/util/hex.h"

#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

namespace maxcode {

std::string to_hex(const unsigned char* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(digits[bytes[i] >> 4]);
    out.push_back(digits[bytes[i] & 15]);
  }
  return out;
}

std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1)
    throw std::runtime_error("cannot draw random bytes (RAND_bytes failed)");
  return to_hex(raw.data(), raw.size());
}

}  // namespace maxcode
