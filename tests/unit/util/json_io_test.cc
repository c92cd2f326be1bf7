// JSON from outside (issue 22, points 8 and 9): dumps that never throw on bytes that are
// not UTF-8, and a reader that refuses deep nesting, repeated keys and numbers beyond
// a double with an error naming the document and the field.
#include "runner/util/json_io.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "support/test_support.h"

namespace maxcode {
namespace {

using nlohmann::json;

std::string error_of(std::string_view text, const JsonReadOptions& options = {}) {
  try {
    parse_json_input(text, "in.json", options);
  } catch (const JsonInputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonIo, DumpReplacesBytesThatAreNotUtf8) {
  // Test output, compiler output or a candidate's code with a stray byte.
  const json record = {{"reason", std::string("tests failed: \xff\xfe garbage \xc3")},
                       {"code", std::string("int f() { return 0; } // \x80")}};
  EXPECT_THROW(record.dump(), json::type_error);  // what ended whole runs (type_error.316)
  const std::string text = dump_json(record, 2);
  EXPECT_NE(text.find("tests failed: \xEF\xBF\xBD\xEF\xBF\xBD garbage \xEF\xBF\xBD"), std::string::npos) << text;
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(json::parse(text)["code"], "int f() { return 0; } // \xEF\xBF\xBD");
  // Valid text is left as it is.
  EXPECT_EQ(dump_json(json{{"a", "histogram 1.75x — ünïcode"}}), R"({"a":"histogram 1.75x — ünïcode"})");
  EXPECT_EQ(dump_json(nlohmann::ordered_json{{"b", 1}, {"a", 2}}), R"({"b":1,"a":2})");
}

TEST(JsonIo, ValidUtf8AndExcerpts) {
  EXPECT_EQ(valid_utf8("ok €"), "ok €");
  // An overlong form, a surrogate, a code point past U+10FFFF and a cut sequence.
  EXPECT_EQ(valid_utf8("\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82"),
            "\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD|"
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_FALSE(is_valid_utf8("a\xff"));
  EXPECT_TRUE(is_valid_utf8("a\xc3\xa9"));
  EXPECT_EQ(excerpt("short"), "short");
  EXPECT_EQ(excerpt(std::string(50'000'000, 'x'), 5), "xxxxx... (50000000 bytes)");
  EXPECT_EQ(excerpt("h\xc3\xa9llo", 2), "h... (6 bytes)");  // never half a character
}

TEST(JsonIo, ReadsWhatNlohmannReads) {
  const std::string text = R"({"a": [1, 2.5, "x", null, true, {"b": {}}], "c": -3, "d": 18446744073709551615})";
  EXPECT_EQ(parse_json_input(text, "in.json"), json::parse(text));
  EXPECT_EQ(parse_json_input("// why\n{\"a\": 1 /* one */}", "in.json", {.comments = true}), json({{"a", 1}}));
  EXPECT_EQ(parse_json_input("[[[]]]", "in.json"), json::parse("[[[]]]"));
}

TEST(JsonIo, SyntaxErrorsGiveTheLineAndColumn) {
  EXPECT_EQ(error_of("{\n  \"a\": tru}\n"),
            "in.json: invalid JSON at line 2, column 11: syntax error while parsing value - invalid literal; "
            "last read: '\"a\": tru}'");
  EXPECT_EQ(error_of("{\"a\": 1 // c\n}"),
            "in.json: invalid JSON at line 1, column 9: syntax error while parsing object - invalid literal; "
            "last read: '1 /'; expected '}'");
  EXPECT_NE(error_of("{\"a\": \"\xff\"}").find("in.json: invalid JSON at line 1, column 8: "), std::string::npos);
  EXPECT_NE(error_of("{\"a\": \"\xff\"}").find("ill-formed UTF-8"), std::string::npos);
  // A 50 MB string cut off: the message quotes a few bytes of it, not all.
  const std::string message = error_of("{\"a\": \"" + std::string(50'000'000, 'x'));
  EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
  EXPECT_NE(message.find("in.json: invalid JSON at line 1"), std::string::npos) << message.substr(0, 400);
}

TEST(JsonIo, NestingDeeperThanTheLimitIsAnErrorNotACrash) {
  const std::size_t deep = 1'000'000;
  EXPECT_EQ(error_of(std::string(deep, '[') + std::string(deep, ']')),
            "in.json: [0][0][0][0][0][0]...[0][0][0][0]: nested deeper than 512 levels");
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += "{\"k\":";
  EXPECT_EQ(error_of("{\"config\": " + objects), "in.json: config.k.k.k.k.k...k.k.k.k: nested deeper than 512 levels");
  // At the limit it reads; one more and it does not.
  EXPECT_NO_THROW(parse_json_input(std::string(512, '[') + std::string(512, ']'), "in.json"));
  EXPECT_NE(error_of(std::string(513, '[') + std::string(513, ']')).find("nested deeper than 512"), std::string::npos);
  EXPECT_NE(error_of("[[[1]]]", {.max_depth = 2}).find("[0][0]: nested deeper than 2 levels"), std::string::npos);
}

// check_json_input: the same verdicts without building the document, and a body 10
// million levels deep refused at the limit (a bit per level, not a value per level).
TEST(JsonIo, CheckingWithoutBuildingStopsAtTheDepthLimit) {
  EXPECT_EQ(check_json_input(R"({"a": [1, {"b": null}]})", "body").verdict, JsonCheck::Verdict::kValid);
  EXPECT_EQ(check_json_input(std::string(64, '[') + std::string(64, ']'), "body", 64).verdict, JsonCheck::Verdict::kValid);
  const JsonCheck deep = check_json_input(std::string(10'000'000, '['), "body", 64);
  EXPECT_EQ(deep.verdict, JsonCheck::Verdict::kTooDeep);
  EXPECT_EQ(deep.problem, "body: nested deeper than 64 levels");
  const JsonCheck broken = check_json_input("{\n  \"a\": tru\n}", "body");
  EXPECT_EQ(broken.verdict, JsonCheck::Verdict::kMalformed);
  EXPECT_NE(broken.problem.find("body: invalid JSON at line 2"), std::string::npos) << broken.problem;
  EXPECT_EQ(check_json_input("", "body").verdict, JsonCheck::Verdict::kMalformed);
  // Values: scalars and containers alike, counted as they come (a flat array is refused
  // at its limit + 1st element, before the rest is read).
  EXPECT_EQ(check_json_input("[1, 2, 3]", "body", 64, 4).verdict, JsonCheck::Verdict::kValid);
  const JsonCheck many = check_json_input("[1, 2, 3, 4]", "body", 64, 4);
  EXPECT_EQ(many.verdict, JsonCheck::Verdict::kTooMany);
  EXPECT_EQ(many.problem, "body: more than 4 values");
  EXPECT_EQ(check_json_input(R"({"a": {"b": [true]}})", "body", 64, 3).verdict, JsonCheck::Verdict::kTooMany);
  EXPECT_EQ(check_json_input("[1] [2]", "body").verdict, JsonCheck::Verdict::kMalformed);
}

TEST(JsonIo, RepeatedKeysAreAnErrorNamingTheKey) {
  EXPECT_EQ(error_of(R"({"build": {"command": "make", "command": "rm -rf ~"}})"),
            "in.json: build.command: duplicate key \"command\" (each field once)");
  EXPECT_EQ(error_of(R"({"a": 1, "a": 2})"), "in.json: a: duplicate key \"a\" (each field once)");
  EXPECT_EQ(error_of(R"({"jobs": [{"x": 1}, {"y": 1, "y": 2}]})"),
            "in.json: jobs[1].y: duplicate key \"y\" (each field once)");
  // The same key in two objects is no repeat.
  EXPECT_NO_THROW(parse_json_input(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])", "in.json"));
  // Where maxcode does not write the rules (a service's reply) the last one stands.
  EXPECT_EQ(parse_json_input(R"({"a": 1, "a": 2})", "reply", {.unique_keys = false}), json({{"a", 2}}));
}

TEST(JsonIo, NumbersBeyondADoubleNameTheField) {
  EXPECT_EQ(error_of("{\n  \"search\": {\"max_wall_s\": 1e400}\n}"),
            "in.json: search.max_wall_s: number out of range: 1e400 (line 2, column 32)");
  EXPECT_EQ(error_of(R"({"budget": {"dollars": [1, -1e999]}})"),
            "in.json: budget.dollars[1]: number out of range: -1e999 (line 1, column 33)");
  EXPECT_EQ(error_of("1e400"), "in.json: (the document): number out of range: 1e400 (line 1, column 5)");
  const std::string digits(200'000, '9');
  const std::string message = error_of("{\"x\": " + digits + "}");
  EXPECT_NE(message.find("in.json: x: number out of range: 9999"), std::string::npos) << message.substr(0, 300);
  EXPECT_LT(message.size(), 300u);
  // Large but finite numbers read as they always did.
  EXPECT_EQ(parse_json_input("[1e300, 123456789012345678901234567890]", "in.json")[0], 1e300);
}

// Every JSON maxcode writes goes through dump_json (runner/util/json_io.h): a plain
// dump() of text that came from outside throws on the first byte that is not UTF-8.
TEST(JsonIo, NoPlainDumpInTheSources) {
  const std::regex plain_dump(R"((\.|->)\s*dump\s*\()");
  std::vector<std::string> found;
  for (const char* top : {"runner", "bot", "cli"}) {
    const std::filesystem::path root = testing::source_path(top);
    ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      if (entry.path().filename() == "json_io.h") continue;  // the one place
      std::ifstream in(entry.path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number)
        if (std::regex_search(line, plain_dump))
          found.push_back(entry.path().string() + ":" + std::to_string(number) + ": " + line);
    }
  }
  for (const std::string& f : found) ADD_FAILURE() << f << "\n  (use dump_json from runner/util/json_io.h)";
}

}  // namespace
}  // namespace maxcode
