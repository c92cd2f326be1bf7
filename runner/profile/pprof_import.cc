#include "runner/profile/pprof_import.h"

#include <cstring>

#include "runner/util/files.h"

namespace maxcode {

namespace {

constexpr std::uint64_t kMaxDepth = 1u << 16;  // more is a corrupt record, not a deep stack

// Word size from the header: 0 then 3, as 8- or 4-byte little-endian words.
int word_size(std::string_view b) {
  auto word = [&](std::size_t offset, int size) {
    std::uint64_t v = 0;
    for (int i = size - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[offset + i]);
    return v;
  };
  if (b.size() >= 40 && word(0, 8) == 0 && word(8, 8) == 3) return 8;
  if (b.size() >= 20 && word(0, 4) == 0 && word(4, 4) == 3) return 4;
  return 0;
}

}  // namespace

bool looks_like_pprof(std::string_view bytes) { return word_size(bytes) != 0; }

AddressProfile parse_pprof(std::string_view b, const std::string& label) {
  const int size = word_size(b);
  if (size == 0)
    throw ProfileFormatError(label + ": byte 0: not a gperftools CPU profile (expected the header words 0, 3)");
  auto fail = [&](std::size_t offset, const std::string& problem) {
    throw ProfileFormatError(label + ": byte " + std::to_string(offset) + ": " + problem);
  };
  std::size_t at = 0;
  auto next = [&](const char* what) {
    if (at + size > b.size()) fail(at, std::string("file ends inside ") + what);
    std::uint64_t v = 0;
    for (int i = size - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    at += size;
    return v;
  };
  AddressProfile p;
  p.source = label;
  p.format = "pprof";
  p.status = "unknown";
  next("the header");
  const std::uint64_t header_words = next("the header");
  const std::size_t version_at = at;
  if (next("the header") != 0) fail(version_at, "unknown format version");
  const std::size_t period_at = at;
  const std::uint64_t period_us = next("the header");
  if (period_us == 0) fail(period_at, "sampling period of 0");
  // header_words counts the words after itself: version, period, padding (and any
  // more a newer writer adds).
  for (std::uint64_t i = 2; i < header_words; ++i) next("the header");
  bool trailer = false;
  while (!trailer) {
    const std::size_t record_at = at;
    const std::uint64_t count = next("a sample record");
    const std::uint64_t depth = next("a sample record");
    if (depth > kMaxDepth) fail(record_at, "stack depth " + std::to_string(depth) + " is not plausible");
    AddressStack stack;
    stack.count = count;
    for (std::uint64_t i = 0; i < depth; ++i) stack.pcs.push_back(next("a sample record"));
    if (count == 0 && depth == 1 && stack.pcs[0] == 0) {
      trailer = true;
    } else {
      if (depth == 0) fail(record_at, "a sample without addresses");
      p.samples += count;
      p.stacks.push_back(std::move(stack));
    }
  }
  p.maps = std::string(b.substr(at));
  p.ns_per_sample = static_cast<double>(period_us) * 1000.0;
  p.cpu_ns = p.ns_per_sample * static_cast<double>(p.samples);
  return p;
}

AddressProfile read_pprof(const std::filesystem::path& path) {
  return parse_pprof(read_text(path), path.string());
}

}  // namespace maxcode
