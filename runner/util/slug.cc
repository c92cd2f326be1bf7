#include "runner/util/slug.h"

#include <algorithm>
#include <cctype>

namespace maxcode {

std::string ref_slug(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    const bool keep = std::isalnum(c) || c == '_';
    const char next = keep ? static_cast<char>(c) : '-';
    if (next == '-' && !out.empty() && out.back() == '-') continue;  // "::" -> "-"
    out += next;
  }
  if (out.size() > 80) out.resize(80);
  while (!out.empty() && out.front() == '-') out.erase(out.begin());
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

bool safe_result_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace maxcode
