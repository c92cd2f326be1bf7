// The one strict JSON reader (.maxcode.json, the llm section, job inputs, sweeps, the
// service's config): errors in the caller's own type, naming the file and the path, in
// one wording whichever document it is.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "runner/util/error.h"
#include "runner/util/json_reader.h"

namespace maxcode {
namespace {

using nlohmann::json;

class DocumentError : public Error {
 public:
  using Error::Error;
};

const std::string kLabel = "doc.json";

// The message of the DocumentError that `read` throws ("" when none).
template <class Read>
std::string error_of(const json& document, Read read) {
  try {
    read(JsonNode(document, kLabel, raise_as<DocumentError>));
  } catch (const DocumentError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("another type: ") + e.what();
  }
  return "";
}

// An open object (a document maxcode wrote itself): other fields are allowed, a null
// field counts as absent, and a field that is there still has to have its type.
TEST(JsonReader, AnOpenObjectAllowsOtherFieldsAndTakesNullForAbsent) {
  auto read = [](const JsonNode& root) {
    const JsonObject o = JsonObject::open(root);
    if (o.has("gone")) throw std::runtime_error("null read as present");
    if (o.string("gone", "default") != "default") throw std::runtime_error("null not taken as absent");
    if (o.elements("missing").size() != 0) throw std::runtime_error("an absent array has elements");
    if (o.elements("list").size() != 2) throw std::runtime_error("elements miscounted");
    o.elements("list")[1].integer<int>(0);
  };
  EXPECT_EQ(error_of({{"newer", 1}, {"gone", nullptr}, {"list", {1, 2}}}, read), "");
  EXPECT_EQ(error_of({{"list", {1, "two"}}}, read), "doc.json: list[1]: expected an integer, got a string");
  EXPECT_EQ(error_of({{"list", 3}}, read), "doc.json: list: expected an array, got a number");
  EXPECT_EQ(error_of(json::array(), read), "doc.json: expected an object, got an array");
}

// An object keyed by names the document chose (benchmarks, functions): each member with
// its path; a null member of an open object is absent.
TEST(JsonReader, MembersComeWithTheirPathsAndSkipNullInAnOpenObject) {
  auto read = [](const JsonNode& root) {
    std::string seen;
    for (const auto& [name, value] : JsonObject::open(root).members())
      seen += name + "=" + std::to_string(value.integer<int>(0)) + ";";
    if (seen != "a=1;b=2;") throw std::runtime_error("members: " + seen);
  };
  EXPECT_EQ(error_of({{"a", 1}, {"b", 2}, {"c", nullptr}}, read), "");
  EXPECT_EQ(error_of({{"a", 1}, {"b", -2}}, read), "doc.json: b: must be >= 0, got -2");
}

TEST(JsonReader, UnknownFieldsAreNamedWithTheNearestKnownOne) {
  auto read = [](const JsonNode& root) { JsonObject(root, {"command", "timeout_s"}); };
  EXPECT_EQ(error_of({{"comand", "x"}}, read), "doc.json: comand: unknown field (did you mean 'command'?)");
  EXPECT_EQ(error_of({{"retries", 1}}, read), "doc.json: retries: unknown field (known fields: command, timeout_s)");
  EXPECT_EQ(error_of(json::array(), read), "doc.json: expected an object, got an array");
  EXPECT_EQ(error_of({{"command", "x"}}, read), "");
}

TEST(JsonReader, PathsFollowObjectsAndArrays) {
  const json doc = {{"jobs", {{{"name", "a"}}, {{"name", 7}}}}};
  auto read = [](const JsonNode& root) {
    const JsonNode jobs = JsonObject(root, {"jobs"}).require("jobs");
    for (std::size_t i = 0; i < jobs.value().size(); ++i) JsonObject(jobs.element(i), {"name"}).string("name");
  };
  EXPECT_EQ(error_of(doc, read), "doc.json: jobs[1].name: expected a string, got a number");
  auto missing = [](const JsonNode& root) { JsonObject(root, {"jobs", "out"}).require("out"); };
  EXPECT_EQ(error_of(doc, missing), "doc.json: out: missing required field");
  auto section = [](const JsonNode& root) { JsonObject(root.at_path("llm.propose"), {"model"}); };
  EXPECT_EQ(error_of({{"modle", "m"}}, section), "doc.json: llm.propose.modle: unknown field (did you mean 'model'?)");
}

TEST(JsonReader, NumbersAndIntegersStateTheirBound) {
  auto timeout = [](const JsonNode& root) { JsonObject(root, {"t"}).number("t", 1, kPositive); };
  EXPECT_EQ(error_of({{"t", 0}}, timeout), "doc.json: t: must be > 0, got 0");
  EXPECT_EQ(error_of({{"t", "5"}}, timeout), "doc.json: t: expected a number, got a string");
  auto at_least = [](const JsonNode& root) { JsonObject(root, {"t"}).number("t", 1, Bound{0.1, false}); };
  EXPECT_EQ(error_of({{"t", 0.05}}, at_least), "doc.json: t: must be >= 0.1, got 0.05");

  auto count = [](const JsonNode& root) { JsonObject(root, {"n"}).integer("n", 1, 1); };
  EXPECT_EQ(error_of({{"n", 0}}, count), "doc.json: n: must be >= 1, got 0");
  EXPECT_EQ(error_of({{"n", 2.5}}, count), "doc.json: n: expected an integer, got 2.5");
  EXPECT_EQ(error_of({{"n", 3e9}}, count), "doc.json: n: must be <= 2147483647, got 3000000000.0");
  EXPECT_EQ(error_of({{"n", 1e300}}, count), "doc.json: n: must be <= 2147483647, got 1e+300");
  EXPECT_EQ(error_of({{"n", -1e300}}, count), "doc.json: n: must be >= 1, got -1e+300");
  EXPECT_EQ(error_of({{"n", 18446744073709551615u}}, count),
            "doc.json: n: must be <= 2147483647, got 18446744073709551615");
  EXPECT_EQ(error_of({{"n", 3.0}}, count), "");  // a whole number written as a double

  // The whole range of an unsigned 64-bit field (seeds).
  const json big = {{"n", 18446744073709551615u}};
  const std::uint64_t seed =
      JsonObject(JsonNode(big, kLabel, raise_as<DocumentError>), {"n"}).integer<std::uint64_t>("n", 1, 0);
  EXPECT_EQ(seed, 18446744073709551615u);
  auto unsigned_field = [](const JsonNode& root) { JsonObject(root, {"n"}).integer<std::uint64_t>("n", 1, 0); };
  EXPECT_EQ(error_of({{"n", -3}}, unsigned_field), "doc.json: n: must be >= 0, got -3");
}

TEST(JsonReader, ListsOfStringsAreReadByTheGivenCheck) {
  auto read = [](const JsonNode& root) { JsonObject(root, {"args"}).strings("args", {}, &JsonNode::non_empty_string); };
  EXPECT_EQ(error_of({{"args", "--qos=x"}}, read), "doc.json: args: expected an array of strings, got a string");
  EXPECT_EQ(error_of({{"args", {"a", ""}}}, read), "doc.json: args[1]: must not be empty");
  auto custom = [](const JsonNode& root) {
    JsonObject(root, {"args"}).strings("args", {}, [](const JsonNode& n) {
      if (n.string().front() != '-') n.fail("expected a flag");
      return n.string();
    });
  };
  EXPECT_EQ(error_of({{"args", {"-a", "b"}}}, custom), "doc.json: args[1]: expected a flag");
}

TEST(JsonReader, AHostileKeyOrValueIsQuotedInPart) {
  const std::string huge(1 << 20, 'k');
  auto read = [](const JsonNode& root) { JsonObject(root, {"a"}); };
  const std::string message = error_of({{huge, 1}}, read);
  EXPECT_LT(message.size(), 2000u) << message.substr(0, 200);
  EXPECT_NE(message.find("unknown field"), std::string::npos);
}

}  // namespace
}  // namespace maxcode
