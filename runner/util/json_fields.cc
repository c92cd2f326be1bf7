#include "runner/util/json_fields.h"

#include <algorithm>

namespace maxcode {

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

std::string describe_type(const nlohmann::json& value) {
  std::string type = value.type_name();
  if (value.is_null()) return type;
  bool vowel = std::string_view("aeiou").find(type.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + type;
}

std::string join_words(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::string_view word : words) out += (out.empty() ? "" : ", ") + std::string(word);
  return out;
}

std::string suggest_field(std::string_view key, const std::vector<std::string_view>& known) {
  std::string_view best;
  std::size_t best_distance = 3;  // within an edit distance of 2
  for (std::string_view name : known) {
    // Two edits change the length by two at most; skipping the rest also keeps a key of
    // megabytes from costing its length times the name's.
    if (key.size() > name.size() + 2 || name.size() > key.size() + 2) continue;
    std::size_t distance = edit_distance(key, name);
    if (distance < best_distance) best = name, best_distance = distance;
  }
  if (!best.empty()) return "did you mean '" + std::string(best) + "'?";
  return "known fields: " + join_words(known);
}

}  // namespace maxcode
