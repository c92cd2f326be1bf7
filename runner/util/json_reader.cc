#include "runner/util/json_reader.h"

#include <algorithm>

#include "runner/util/json_fields.h"
#include "runner/util/json_io.h"

namespace maxcode {

namespace {

// A bound without a trailing ".0" for whole numbers ("> 0", ">= 1.05").
std::string format_bound(double bound) {
  if (bound == std::trunc(bound) && std::fabs(bound) < 1e15) return std::to_string(static_cast<long long>(bound));
  return dump_json(nlohmann::json(bound));
}

}  // namespace

void JsonNode::fail(const std::string& problem) const {
  // Paths may hold a key of megabytes, problems a value of megabytes: quote a part.
  raise_(*label_ + ": " + (path_.empty() ? "" : excerpt(path_, 200) + ": ") + excerpt(problem, 1000));
  throw std::logic_error("RaiseError returned");  // never reached: raise_ throws
}

void JsonNode::expect(bool ok, std::string_view expected) const {
  if (!ok) fail("expected " + std::string(expected) + ", got " + describe_type(*value_));
}

std::string JsonNode::path_to(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string JsonNode::quoted_value() const { return dump_json(*value_); }

JsonNode JsonNode::child(std::string_view key) const { return {value_->at(key), path_to(key), *this}; }

JsonNode JsonNode::element(std::size_t index) const {
  return {(*value_)[index], path_ + "[" + std::to_string(index) + "]", *this};
}

std::vector<JsonNode> JsonNode::elements() const {
  expect(value_->is_array(), "an array");
  std::vector<JsonNode> out;
  for (std::size_t i = 0; i < value_->size(); ++i) out.push_back(element(i));
  return out;
}

JsonNode JsonNode::absent(std::string_view key) const { return {*value_, path_to(key), *this}; }

std::string JsonNode::string() const {
  expect(value_->is_string(), "a string");
  return value_->get<std::string>();
}

std::string JsonNode::non_empty_string() const {
  std::string text = string();
  if (text.empty()) fail("must not be empty");
  return text;
}

bool JsonNode::boolean() const {
  expect(value_->is_boolean(), "a boolean");
  return value_->get<bool>();
}

double JsonNode::number(Bound bound) const {
  expect(value_->is_number(), "a number");
  const double number = value_->get<double>();
  if (!(bound.strict ? number > bound.min : number >= bound.min))
    fail("must be " + std::string(bound.strict ? "> " : ">= ") + format_bound(bound.min) + ", got " + quoted_value());
  return number;
}

JsonObject::JsonObject(const JsonNode& node, std::vector<std::string_view> known) : node_(node) {
  node_.expect(node_.value().is_object(), "an object");
  for (const auto& [key, value] : node_.value().items())
    if (std::find(known.begin(), known.end(), key) == known.end())
      node_.absent(excerpt(key, 60)).fail("unknown field (" + suggest_field(key, known) + ")");
}

JsonObject::JsonObject(const JsonNode& node) : node_(node), open_(true) {
  node_.expect(node_.value().is_object(), "an object");
}

JsonObject JsonObject::open(const JsonNode& node) { return JsonObject(node); }

std::optional<JsonNode> JsonObject::get(std::string_view field) const {
  if (!has(field)) return std::nullopt;
  return node_.child(field);
}

JsonNode JsonObject::require(std::string_view field) const {
  if (auto node = get(field)) return *node;
  fail(field, "missing required field");
}

std::vector<JsonNode> JsonObject::elements(std::string_view field) const {
  const auto node = get(field);
  return node ? node->elements() : std::vector<JsonNode>{};
}

std::vector<std::pair<std::string, JsonNode>> JsonObject::members() const {
  std::vector<std::pair<std::string, JsonNode>> out;
  for (const auto& [key, value] : node_.value().items())
    if (!(open_ && value.is_null())) out.emplace_back(key, node_.child(key));
  return out;
}

void JsonObject::fail(std::string_view field, const std::string& problem) const { node_.absent(field).fail(problem); }

std::string JsonObject::string(std::string_view field, std::string fallback) const {
  auto node = get(field);
  return node ? node->string() : fallback;
}

bool JsonObject::boolean(std::string_view field, bool fallback) const {
  auto node = get(field);
  return node ? node->boolean() : fallback;
}

double JsonObject::number(std::string_view field, double fallback, Bound bound) const {
  auto node = get(field);
  return node ? node->number(bound) : fallback;
}

}  // namespace maxcode
