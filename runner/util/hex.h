// Bytes as lowercase hex, and random tokens drawn from OpenSSL's generator: leases,
// OAuth-style states, keys. One encoder, where there were four.
#pragma once

#include <cstddef>
#include <string>

namespace maxcode {

std::string to_hex(const unsigned char* bytes, std::size_t n);

// `bytes` random bytes (RAND_bytes) as 2 * `bytes` hex digits; throws std::runtime_error
// when the generator fails (never a weak fallback).
std::string random_hex(std::size_t bytes);

}  // namespace maxcode
