// Strict reading of a JSON document a person wrote or a client sent: .maxcode.json and
// its llm section, a job input, a sweep, the service's config. One reader for all of
// them, so that each names a mistake the same way:
//
//   <label>: <path>: <problem>    ".maxcode.json: build.comand: unknown field (did you mean 'command'?)"
//
// A JsonNode is one value and where it sits; a JsonObject is a node checked to be an
// object holding only the fields its reader knows. Errors are thrown as the caller's own
// type (ConfigError, JobInputError, ...), given once to the document's root node.
// Values quoted in an error are cut short: a hostile document may hold megabytes.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

// Throws the caller's error type with `message`; never returns.
using RaiseError = void (*)(const std::string& message);

template <class E>
[[noreturn]] void raise_as(const std::string& message) {
  throw E(message);
}

// The least a number may be: `> min` when strict, else `>= min`.
struct Bound {
  double min = -std::numeric_limits<double>::infinity();
  bool strict = false;
};
inline constexpr Bound kPositive{0, true};
inline constexpr Bound kNonNegative{0, false};

class JsonNode {
 public:
  // The document itself: its path is empty. `label` (the file, as errors name it) must
  // outlive every node read from it.
  JsonNode(const nlohmann::json& value, const std::string& label, RaiseError raise)
      : value_(&value), label_(&label), raise_(raise) {}

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }  // "benchmarks[1].command"
  const std::string& label() const { return *label_; }

  [[noreturn]] void fail(const std::string& problem) const;
  // "expected <expected>, got <the value's type>" unless `ok`.
  void expect(bool ok, std::string_view expected) const;

  // A member known to be there, and an element of an array.
  JsonNode child(std::string_view key) const;
  JsonNode element(std::size_t index) const;
  // Every element of this array, each named by its place ("expected an array" otherwise).
  std::vector<JsonNode> elements() const;
  // This value, named by `path` in errors: a section read apart from its document.
  JsonNode at_path(std::string path) const { return {*value_, std::move(path), *this}; }
  // A node at `key` below this one, whether or not the document has it (for "missing
  // required field" and other errors about a field that is absent).
  JsonNode absent(std::string_view key) const;

  std::string string() const;
  std::string non_empty_string() const;
  bool boolean() const;
  double number(Bound bound = {}) const;
  // Whole numbers written as 3.0 or 1e3 are accepted; 1.5 and values outside
  // [min, max] are not.
  template <std::integral Int = int>
  Int integer(long long min, Int max = std::numeric_limits<Int>::max()) const {
    expect(value_->is_number(), "an integer");
    std::optional<Int> result;
    bool too_big = false;
    if (value_->is_number_unsigned()) {
      const auto whole = value_->get<std::uint64_t>();
      too_big = std::cmp_greater(whole, max);
      if (!too_big) result = static_cast<Int>(whole);
    } else if (value_->is_number_integer()) {
      const auto whole = value_->get<std::int64_t>();
      too_big = std::cmp_greater(whole, max);
      if (!too_big && std::in_range<Int>(whole)) result = static_cast<Int>(whole);
    } else {
      const double number = value_->get<double>();
      if (number != std::trunc(number)) fail("expected an integer, got " + quoted_value());
      // Beyond 2^53 a double no longer holds every integer: out of range either way.
      if (std::fabs(number) > 9007199254740992.0 || !std::in_range<Int>(static_cast<std::int64_t>(number)))
        too_big = number > 0;
      else if (std::cmp_greater(static_cast<std::int64_t>(number), max))
        too_big = true;
      else
        result = static_cast<Int>(number);
    }
    if (too_big) fail("must be <= " + std::to_string(max) + ", got " + quoted_value());
    if (!result || std::cmp_less(*result, min)) fail("must be >= " + std::to_string(min) + ", got " + quoted_value());
    return *result;
  }
  // An array of strings, each read by `read` (a member such as &JsonNode::non_empty_string,
  // or a function taking the element's node).
  template <class Read = std::string (JsonNode::*)() const>
  std::vector<std::string> strings(Read read = &JsonNode::string) const {
    expect(value_->is_array(), "an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value_->size(); ++i) out.push_back(std::invoke(read, element(i)));
    return out;
  }

 private:
  JsonNode(const nlohmann::json& value, std::string path, const JsonNode& parent)
      : value_(&value), path_(std::move(path)), label_(parent.label_), raise_(parent.raise_) {}
  std::string path_to(std::string_view key) const;
  std::string quoted_value() const;  // the value as JSON (fail() cuts the message short)

  const nlohmann::json* value_;
  std::string path_;
  const std::string* label_;
  RaiseError raise_;
};

// An object whose fields are all known: an unknown one is an error that suggests the
// nearest known name (typos are the common case).
class JsonObject {
 public:
  JsonObject(const JsonNode& node, std::vector<std::string_view> known);
  // An object whose fields are not checked against a list, and whose null fields count as
  // absent: a document maxcode wrote itself, read back by this version or another (a
  // profile, a GPU summary), where a field may be new or gone but never a typo.
  static JsonObject open(const JsonNode& node);

  const JsonNode& node() const { return node_; }
  bool has(std::string_view field) const {
    const auto it = node_.value().find(field);
    return it != node_.value().end() && !(open_ && it->is_null());
  }
  std::optional<JsonNode> get(std::string_view field) const;
  JsonNode require(std::string_view field) const;  // "missing required field" when absent
  // The elements of an array field, each a node named by its place; none when absent.
  std::vector<JsonNode> elements(std::string_view field) const;
  // Every field with its node, in the document's order (an object keyed by names the
  // document chose: benchmark names, functions).
  std::vector<std::pair<std::string, JsonNode>> members() const;
  [[noreturn]] void fail(std::string_view field, const std::string& problem) const;

  // Typed fields with a default: an absent field keeps `fallback`.
  std::string string(std::string_view field, std::string fallback = {}) const;
  bool boolean(std::string_view field, bool fallback) const;
  double number(std::string_view field, double fallback, Bound bound = {}) const;
  template <std::integral Int>
  Int integer(std::string_view field, Int fallback, long long min, Int max = std::numeric_limits<Int>::max()) const {
    auto node = get(field);
    return node ? node->integer<Int>(min, max) : fallback;
  }
  template <class Read = std::string (JsonNode::*)() const>
  std::vector<std::string> strings(std::string_view field, std::vector<std::string> fallback,
                                   Read read = &JsonNode::string) const {
    auto node = get(field);
    return node ? node->strings(read) : fallback;
  }

 private:
  explicit JsonObject(const JsonNode& node);  // open()
  JsonNode node_;
  bool open_ = false;
};

}  // namespace maxcode
