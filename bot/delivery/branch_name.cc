#include "bot/delivery/branch_name.h"

#include <cctype>

namespace maxcode::bot {

std::string slug(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    // Dots go too: no "..", ".lock" or leading "." can then make an invalid ref.
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

std::string branch_for(const std::string& file, const std::string& function) {
  return "maxcode/" + slug(file) + "/" + slug(function);
}

}  // namespace maxcode::bot
