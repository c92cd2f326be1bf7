#include "runner/llm/redact.h"

#include <algorithm>
#include <cctype>

namespace maxcode::llm {
namespace {

constexpr std::size_t kShortestSecretRun = 8;

// Length of the longest run of `text` starting at `at` that also occurs in `key`.
std::size_t key_run_at(const std::string& text, std::size_t at, const std::string& key) {
  std::size_t best = 0;
  for (std::size_t k = 0; k < key.size(); ++k) {
    std::size_t n = 0;
    while (at + n < text.size() && k + n < key.size() && text[at + n] == key[k + n]) ++n;
    best = std::max(best, n);
  }
  return best;
}

}  // namespace

std::string redact(std::string text, const std::string& key) {
  if (key.empty()) return text;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t run = key_run_at(text, i, key);
    if (run >= std::min(kShortestSecretRun, key.size())) {
      out += "[redacted]";
      i += run;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string excerpt(const std::string& text, std::size_t max_bytes) {
  std::string line;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !line.empty();
      continue;
    }
    if (space) line += ' ';
    space = false;
    line += c;
  }
  if (line.size() <= max_bytes) return line;
  std::size_t cut = max_bytes;
  // Do not split a multi-byte character: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return line.substr(0, cut) + "...";
}

}  // namespace maxcode::llm
