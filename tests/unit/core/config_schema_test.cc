// docs/schema/maxcode.schema.json, the JSON Schema editors use for .maxcode.json, must
// name exactly the fields the reader accepts (config_fields()), with the reader's
// defaults: an editor that completes a field the reader rejects, or misses one it
// accepts, misleads the person writing the file.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "runner/core/config.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

using nlohmann::json;

json schema() { return json::parse(testing::read_file(testing::source_path("docs/schema/maxcode.schema.json"))); }

// The schema of the object at a config_fields() place: "" -> the document,
// "benchmarks[]" -> properties.benchmarks.items, "benchmarks[].roofline" -> ... .
const json& object_at(const json& root, const std::string& place) {
  const json* node = &root;
  std::stringstream parts(place);
  std::string part;
  while (std::getline(parts, part, '.')) {
    const bool each = part.size() > 2 && part.substr(part.size() - 2) == "[]";
    if (each) part.resize(part.size() - 2);
    node = &node->at("properties").at(part);
    if (each) node = &node->at("items");
  }
  return *node;
}

// Places of every object in the schema that lists its properties and allows no others.
void closed_objects(const json& node, const std::string& place, std::set<std::string>& out) {
  if (!node.is_object()) return;
  if (node.contains("properties") && node.value("additionalProperties", json(true)) == json(false)) {
    out.insert(place);
    for (const auto& [name, child] : node["properties"].items()) {
      const std::string inner = place.empty() ? name : place + "." + name;
      closed_objects(child, inner, out);
      if (child.contains("items")) closed_objects(child["items"], inner + "[]", out);
    }
  }
}

TEST(ConfigSchema, NamesTheSameFieldsAsTheReader) {
  const json root = schema();
  for (const auto& [place, fields] : config_fields()) {
    SCOPED_TRACE("place '" + place + "'");
    const json& object = object_at(root, place);
    EXPECT_EQ(object.value("additionalProperties", json(true)), json(false)) << "the schema must refuse other fields";
    std::set<std::string> in_schema, in_reader(fields.begin(), fields.end());
    for (const auto& [name, unused] : object.at("properties").items()) in_schema.insert(name);
    EXPECT_EQ(in_schema, in_reader);
  }
  std::set<std::string> schema_places, reader_places;
  closed_objects(root, "", schema_places);
  for (const auto& [place, unused] : config_fields()) reader_places.insert(place);
  EXPECT_EQ(schema_places, reader_places) << "an object of the schema has no list in config_fields(), or the reverse";
}

TEST(ConfigSchema, RequiresWhatTheReaderRequires) {
  const json root = schema();
  EXPECT_EQ(root.at("required"), json({"build", "test", "benchmarks"}));
  // Each one missing is an error of the reader.
  const json minimal = json::parse(R"({"build": {"command": "make"}, "test": {"command": "make test"},
                                       "benchmarks": [{"name": "main", "command": "./bench"}]})");
  for (const std::string field : {"build", "test", "benchmarks"}) {
    json broken = minimal;
    broken.erase(field);
    EXPECT_THROW(parse_config(broken, ".maxcode.json"), ConfigError) << field;
  }
}

// Every "default" the schema states for a field of a single object is what the reader
// gives when the field is absent.
TEST(ConfigSchema, DefaultsAreTheReadersDefaults) {
  const json root = schema();
  const json minimal = json::parse(R"({"build": {"command": "make"}, "test": {"command": "make test"},
                                       "benchmarks": [{"name": "main", "command": "./bench"}]})");
  const json parsed = to_json(parse_config(minimal, ".maxcode.json"));
  int compared = 0;
  for (const auto& [place, fields] : config_fields()) {
    if (place.empty() || place.find("[]") != std::string::npos) continue;
    const json& object = object_at(root, place);
    for (const auto& [name, property] : object.at("properties").items()) {
      if (!property.contains("default")) continue;
      SCOPED_TRACE(place + "." + name);
      ASSERT_TRUE(parsed.at(place).contains(name)) << "to_json leaves out a field with a default";
      EXPECT_EQ(parsed.at(place).at(name), property.at("default"));
      ++compared;
    }
  }
  const json& bench = object_at(root, "benchmarks[]").at("properties");
  for (const char* name : {"metric", "rtol", "atol", "timeout_s"})
    EXPECT_EQ(parsed.at("benchmarks")[0].at(name), bench.at(name).at("default")) << name;
  EXPECT_GT(compared, 30);
}

}  // namespace
}  // namespace maxcode
