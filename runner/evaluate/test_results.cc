#include "runner/evaluate/test_results.h"

#include <dirent.h>
#include <expat.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace maxcode {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kMaxDepth = 32;
constexpr std::size_t kMaxNamesShown = 8;
constexpr std::size_t kMaxNameChars = 160;

std::string shorten(const std::string& name) {
  if (name.size() <= kMaxNameChars) return name;
  // Cut at a character boundary: the names are UTF-8 and end up in JSON.
  std::size_t cut = kMaxNameChars;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return name.substr(0, cut) + "...";
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kMaxNamesShown; ++i)
    out += (out.empty() ? "" : ", ") + shorten(names[i]);
  if (names.size() > kMaxNamesShown) out += " and " + std::to_string(names.size() - kMaxNamesShown) + " more";
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A test's identity across runs: the same test of the same program.
using Key = std::tuple<std::string, std::string, std::string, std::string>;
Key key_of(const TestCase& t) { return {t.framework, t.program, t.suite, t.name}; }

struct Counts {
  int ran = 0, passed = 0, failed = 0, skipped = 0;
  void add(const TestCase& t) {
    if (t.ran()) ++ran;
    if (t.status == TestCase::Status::kPassed) ++passed;
    if (t.status == TestCase::Status::kFailed) ++failed;
    if (t.status == TestCase::Status::kSkipped) ++skipped;
  }
  json to_json() const { return {{"ran", ran}, {"passed", passed}, {"failed", failed}, {"skipped", skipped}}; }
};

// ---- GoogleTest JSON ----

std::string string_field(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// ---- JUnit XML (expat) ----

struct JunitState {
  XML_Parser parser = nullptr;
  std::string label, program;
  std::string error;  // set by a handler that stops the parser
  int depth = 0;
  bool root_seen = false;
  bool in_case = false;
  TestCase current;
  TestResults results;
};

const char* attribute(const XML_Char** attributes, const char* name) {
  for (int i = 0; attributes[i]; i += 2)
    if (std::strcmp(attributes[i], name) == 0) return attributes[i + 1];
  return nullptr;
}

void stop(JunitState& s, const std::string& why) {
  if (s.error.empty()) s.error = why;
  XML_StopParser(s.parser, XML_FALSE);
}

void XMLCALL junit_start(void* data, const XML_Char* name, const XML_Char** attributes) {
  auto& s = *static_cast<JunitState*>(data);
  if (!s.error.empty()) return;
  if (++s.depth > kMaxDepth) return stop(s, "nested deeper than " + std::to_string(kMaxDepth) + " elements");
  const std::string element = name;
  if (!s.root_seen) {
    s.root_seen = true;
    if (element != "testsuites" && element != "testsuite")
      return stop(s, "its root element is <" + shorten(element) + ">, not <testsuites> or <testsuite>");
  }
  if (element == "testcase") {
    if (s.in_case) return stop(s, "a <testcase> inside a <testcase>");
    s.in_case = true;
    s.current = TestCase{};
    s.current.framework = "ctest";
    s.current.program = s.program;
    const char* n = attribute(attributes, "name");
    if (!n) return stop(s, "a <testcase> without a name (line " + std::to_string(XML_GetCurrentLineNumber(s.parser)) + ")");
    s.current.name = n;
    const char* status = attribute(attributes, "status");
    const std::string st = status ? status : "";
    if (st == "notrun" || st == "disabled" || st == "skipped") s.current.status = TestCase::Status::kSkipped;
    else if (st == "fail" || st == "failed" || st == "error") s.current.status = TestCase::Status::kFailed;
  } else if (s.in_case && (element == "failure" || element == "error")) {
    s.current.status = TestCase::Status::kFailed;
  } else if (s.in_case && element == "skipped") {
    if (s.current.status != TestCase::Status::kFailed) s.current.status = TestCase::Status::kSkipped;
  }
}

void XMLCALL junit_end(void* data, const XML_Char* name) {
  auto& s = *static_cast<JunitState*>(data);
  if (!s.error.empty()) return;
  --s.depth;
  if (std::strcmp(name, "testcase") == 0 && s.in_case) {
    s.in_case = false;
    s.results.tests.push_back(std::move(s.current));
  }
}

// A report has no use for a document type: refusing one refuses every entity trick.
void XMLCALL junit_doctype(void* data, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  stop(*static_cast<JunitState*>(data), "has a DOCTYPE (a JUnit report has none)");
}

void XMLCALL junit_entity(void* data, const XML_Char*, int, const XML_Char*, int, const XML_Char*, const XML_Char*,
                          const XML_Char*, const XML_Char*) {
  stop(*static_cast<JunitState*>(data), "declares an entity (a JUnit report has none)");
}

// ---- reading the folder ----

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string read_at(int dir_fd, const std::string& name, const std::string& label, std::size_t max_bytes) {
  Fd f;
  f.fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0)
    throw std::runtime_error(label + ": cannot read it: " +
                             (errno == ELOOP ? std::string("it is a symbolic link") : std::strerror(errno)));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw std::runtime_error(label + ": cannot read it: not a regular file");
  if (static_cast<std::size_t>(st.st_size) > max_bytes)
    throw std::runtime_error(label + ": larger than " + std::to_string(max_bytes) + " bytes");
  std::string data;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(label + ": cannot read it: " + std::strerror(errno));
    if (n == 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
    if (data.size() > max_bytes) throw std::runtime_error(label + ": larger than " + std::to_string(max_bytes) + " bytes");
  }
  return data;
}

// A file name fit to quote: printable ASCII, else escaped.
std::string printable(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return shorten(out);
}

}  // namespace

std::string TestCase::full_name() const {
  std::string test = suite.empty() ? name : suite + "." + name;
  return (framework == "ctest" ? std::string("ctest") : program) + ": " + test;
}

int TestResults::count(TestCase::Status status) const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [&](const TestCase& t) { return t.status == status; }));
}

int TestResults::ran() const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [](const TestCase& t) { return t.ran(); }));
}

void TestResults::append(TestResults other) {
  files.insert(files.end(), other.files.begin(), other.files.end());
  for (auto& p : other.programs)
    if (std::find(programs.begin(), programs.end(), p) == programs.end()) programs.push_back(std::move(p));
  for (auto& t : other.tests) tests.push_back(std::move(t));
  unattributed_failures += other.unattributed_failures;
}

std::string TestResults::summary() const {
  if (!reported()) return "no test framework reported (the exit code alone judges the tests)";
  std::map<std::string, Counts> by;
  for (const auto& t : tests) by[t.framework].add(t);
  std::string out;
  for (const auto& [framework, c] : by) {
    std::string part = framework + ": " + std::to_string(c.ran) + " ran (" + std::to_string(c.passed) + " passed";
    if (c.failed) part += ", " + std::to_string(c.failed) + " failed";
    part += ")";
    if (c.skipped) part += ", " + std::to_string(c.skipped) + " skipped";
    out += (out.empty() ? "" : "; ") + part;
  }
  if (out.empty()) out = "no test ran";
  if (unattributed_failures) out += "; " + std::to_string(unattributed_failures) + " failure(s) outside any test";
  return out + " (" + std::to_string(files.size()) + " report file" + (files.size() == 1 ? "" : "s") + ")";
}

std::string gtest_program_of(const std::string& file_name) {
  std::string stem = ends_with(file_name, ".json") ? file_name.substr(0, file_name.size() - 5) : file_name;
  const std::size_t underscore = stem.rfind('_');
  if (underscore != std::string::npos && underscore > 0 && underscore + 1 < stem.size() &&
      std::all_of(stem.begin() + static_cast<long>(underscore) + 1, stem.end(), [](char c) { return c >= '0' && c <= '9'; }))
    stem.resize(underscore);
  return stem;
}

TestResults parse_gtest_json(const std::string& text, const std::string& label, const std::string& program) {
  json document;
  try {
    // A report is a few levels deep; anything deeper is not one (and could exhaust the stack).
    document = json::parse(text, [&](int depth, json::parse_event_t, json&) {
      if (depth > kMaxDepth)
        throw std::runtime_error(label + ": not GoogleTest JSON: nested deeper than " + std::to_string(kMaxDepth) + " levels");
      return true;
    });
  } catch (const json::parse_error& e) {
    // e.what() quotes the bytes it stopped at, which may not be text: the position only.
    throw std::runtime_error(label + ": not GoogleTest JSON: " +
                             (text.empty() ? std::string("the file is empty") : "syntax error at byte " + std::to_string(e.byte)));
  }
  if (!document.is_object() || !document.contains("testsuites") || !document["testsuites"].is_array())
    throw std::runtime_error(label + ": not GoogleTest JSON (no \"testsuites\" array)");
  TestResults r;
  int counted_failures = 0;
  for (const json& suite : document["testsuites"]) {
    if (!suite.is_object()) throw std::runtime_error(label + ": a test suite that is not an object");
    const std::string suite_name = string_field(suite, "name");
    auto cases = suite.find("testsuite");
    if (cases == suite.end()) continue;
    if (!cases->is_array()) throw std::runtime_error(label + ": suite '" + shorten(suite_name) + "': \"testsuite\" is not an array");
    for (const json& c : *cases) {
      if (!c.is_object()) throw std::runtime_error(label + ": suite '" + shorten(suite_name) + "': a test that is not an object");
      // A listing (--gtest_list_tests) names tests without running them.
      if (!c.contains("status") && !c.contains("result")) continue;
      TestCase t;
      t.framework = "gtest";
      t.program = program;
      t.suite = suite_name;
      t.name = string_field(c, "name");
      const std::string status = string_field(c, "status"), result = string_field(c, "result");
      auto failures = c.find("failures");
      if (failures != c.end() && failures->is_array() && !failures->empty()) {
        t.status = TestCase::Status::kFailed;
        ++counted_failures;
      } else if (status == "NOTRUN" || result == "SKIPPED" || result == "SUPPRESSED") {
        t.status = TestCase::Status::kSkipped;
      }
      r.tests.push_back(std::move(t));
    }
  }
  // The program's own count, where it says more than its tests do (a failure in a
  // global SetUp, say).
  auto total = document.find("failures");
  if (total != document.end() && total->is_number_integer() && total->get<long long>() > counted_failures)
    r.unattributed_failures = static_cast<int>(std::min<long long>(total->get<long long>() - counted_failures, 1 << 20));
  auto errors = document.find("errors");
  if (errors != document.end() && errors->is_number_integer() && errors->get<long long>() > 0)
    r.unattributed_failures += static_cast<int>(std::min<long long>(errors->get<long long>(), 1 << 20));
  r.programs.push_back("gtest " + program);
  return r;
}

TestResults parse_junit_xml(const std::string& text, const std::string& label, const std::string& program) {
  if (text.empty()) throw std::runtime_error(label + ": not a JUnit report: the file is empty");
  JunitState s;
  s.label = label;
  s.program = program;
  XML_Parser parser = XML_ParserCreate("UTF-8");
  if (!parser) throw std::runtime_error(label + ": out of memory for the XML parser");
  s.parser = parser;
  XML_SetUserData(parser, &s);
  XML_SetElementHandler(parser, junit_start, junit_end);
  XML_SetStartDoctypeDeclHandler(parser, junit_doctype);
  XML_SetEntityDeclHandler(parser, junit_entity);
  const bool ok = XML_Parse(parser, text.data(), static_cast<int>(text.size()), XML_TRUE) == XML_STATUS_OK;
  std::string error;
  if (!s.error.empty()) {
    error = s.error;
  } else if (!ok) {
    error = std::string(XML_ErrorString(XML_GetErrorCode(parser))) + " at line " +
            std::to_string(XML_GetCurrentLineNumber(parser));
  }
  XML_ParserFree(parser);
  if (!error.empty()) throw std::runtime_error(label + ": not a JUnit report: " + error);
  s.results.programs.push_back("ctest");
  return std::move(s.results);
}

TestResults read_test_results(const fs::path& dir, const TestResultLimits& limits) {
  TestResults all;
  Fd d;
  d.fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (d.fd < 0) {
    if (errno == ENOENT) return all;
    throw std::runtime_error("test reports in " + dir.string() + ": cannot read the folder: " +
                             (errno == ELOOP || errno == ENOTDIR ? std::string("it is not a folder (a link?)")
                                                                 : std::strerror(errno)));
  }
  // The listing reads through its own descriptor; `d` keeps the one files open beneath.
  const int listing_fd = ::dup(d.fd);
  DIR* listing = listing_fd < 0 ? nullptr : ::fdopendir(listing_fd);
  if (!listing) {
    if (listing_fd >= 0) ::close(listing_fd);
    throw std::runtime_error("test reports in " + dir.string() + ": cannot list the folder: " + std::strerror(errno));
  }
  std::vector<std::string> names;
  std::size_t entries = 0;
  std::string too_many;
  while (dirent* entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (++entries > limits.max_files) {
      too_many = "test reports in " + dir.string() + ": more than " + std::to_string(limits.max_files) + " entries";
      break;
    }
    if (ends_with(name, ".json") || (name.rfind("ctest-", 0) == 0 && ends_with(name, ".xml"))) names.push_back(name);
  }
  ::closedir(listing);
  if (!too_many.empty()) throw std::runtime_error(too_many);
  std::sort(names.begin(), names.end());
  std::size_t total = 0;
  for (const std::string& name : names) {
    const std::string label = (dir / printable(name)).string();
    std::string text = read_at(d.fd, name, label, limits.max_file_bytes);
    total += text.size();
    if (total > limits.max_total_bytes)
      throw std::runtime_error("test reports in " + dir.string() + ": more than " + std::to_string(limits.max_total_bytes) +
                               " bytes in all (at " + printable(name) + ")");
    TestResults one = ends_with(name, ".json") ? parse_gtest_json(text, label, gtest_program_of(name))
                                               : parse_junit_xml(text, label, "ctest");
    one.files.push_back(name);
    all.append(std::move(one));
  }
  return all;
}

std::string judge_test_results(const TestResults& original, const TestResults& candidate) {
  std::map<Key, std::pair<int, int>> ran;     // per test: times it ran on the original, on the candidate
  std::map<Key, int> failed_on_original;
  std::map<Key, const TestCase*> any;
  for (const auto& t : original.tests) {
    if (t.ran()) ++ran[key_of(t)].first;
    if (t.status == TestCase::Status::kFailed) ++failed_on_original[key_of(t)];
    any.emplace(key_of(t), &t);
  }
  std::map<Key, int> failed_here;
  for (const auto& t : candidate.tests) {
    if (t.ran()) ++ran[key_of(t)].second;
    if (t.status == TestCase::Status::kFailed) ++failed_here[key_of(t)];
    any.emplace(key_of(t), &t);
  }
  std::vector<std::string> problems;
  std::vector<std::string> failed;
  for (const auto& [key, n] : failed_here)
    if (n > failed_on_original[key]) failed.push_back(any[key]->full_name());
  if (!failed.empty())
    problems.push_back(std::to_string(failed.size()) + " test" + (failed.size() == 1 ? "" : "s") +
                       " failed by their framework's report: " + list_names(failed));
  if (candidate.unattributed_failures > original.unattributed_failures)
    problems.push_back(std::to_string(candidate.unattributed_failures - original.unattributed_failures) +
                       " failure(s) reported outside any test");
  std::vector<std::string> silent;
  for (const auto& program : original.programs)
    if (std::find(candidate.programs.begin(), candidate.programs.end(), program) == candidate.programs.end())
      silent.push_back(program);
  if (!silent.empty())
    problems.push_back("no test report from " + list_names(silent) + " (the original's run wrote one)");
  std::vector<std::string> missing;
  for (const auto& [key, n] : ran)
    if (n.second < n.first) missing.push_back(any[key]->full_name());
  if (!missing.empty() || candidate.ran() < original.ran())
    problems.push_back("fewer tests ran than on the original (" + std::to_string(candidate.ran()) + " of " +
                       std::to_string(original.ran()) + ")" +
                       (missing.empty() ? std::string() : "; not run: " + list_names(missing)));
  std::string out;
  for (const auto& p : problems) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string original_test_failures(const TestResults& original) {
  std::vector<std::string> failed;
  for (const auto& t : original.tests)
    if (t.status == TestCase::Status::kFailed) failed.push_back(t.full_name());
  std::string out;
  if (!failed.empty()) out = std::to_string(failed.size()) + " test(s) fail on the original code: " + list_names(failed);
  if (original.unattributed_failures)
    out += (out.empty() ? "" : "; ") + std::to_string(original.unattributed_failures) +
           " failure(s) on the original code outside any test";
  return out;
}

json to_json(const TestResults& results) {
  Counts all;
  std::map<std::string, Counts> frameworks;
  std::map<std::tuple<std::string, std::string, std::string>, Counts> suites;
  for (const auto& t : results.tests) {
    all.add(t);
    frameworks[t.framework].add(t);
    suites[{t.framework, t.program, t.suite}].add(t);
  }
  json j = all.to_json();
  j["summary"] = results.summary();
  j["reported"] = results.reported();
  j["files"] = results.files.size();
  j["programs"] = results.programs;
  if (results.unattributed_failures) j["failures_outside_tests"] = results.unattributed_failures;
  j["frameworks"] = json::object();
  for (const auto& [name, c] : frameworks) j["frameworks"][name] = c.to_json();
  j["suites"] = json::array();
  for (const auto& [key, c] : suites) {
    json s = c.to_json();
    s["framework"] = std::get<0>(key);
    s["program"] = std::get<1>(key);
    s["suite"] = std::get<2>(key);
    j["suites"].push_back(std::move(s));
  }
  return j;
}

std::string ctest_wrapper_script(const std::string& real_ctest) {
  std::string quoted = "'";
  for (char c : real_ctest) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  return "#!/bin/sh\n"
         "# maxcode: ctest with a JUnit report of its tests (docs/evaluation.md \"Test results\").\n"
         "real=" + quoted + "\n"
         "dir=\"$MAXCODE_TEST_RESULTS\"\n"
         "[ -n \"$dir\" ] || exec \"$real\" \"$@\"\n"
         "for a in \"$@\"; do\n"
         "  case \"$a\" in\n"
         "    --output-junit|-S|-SP|-SR|--build-and-test|--build-options|-N|--show-only|--show-only=*|--version|-version|"
         "--help|-help|-h|-H|--help-*|--print-labels) exec \"$real\" \"$@\" ;;\n"
         "  esac\n"
         "done\n"
         "n=0\n"
         "while [ -e \"$dir/ctest-$$-$n.xml\" ]; do n=$((n + 1)); done\n"
         "exec \"$real\" \"$@\" --output-junit \"$dir/ctest-$$-$n.xml\"\n";
}

bool ctest_writes_junit(const std::string& version_output) {
  const std::string marker = "ctest version ";
  const std::size_t at = version_output.find(marker);
  if (at == std::string::npos) return false;
  int major = 0, minor = 0;
  if (std::sscanf(version_output.c_str() + at + marker.size(), "%d.%d", &major, &minor) != 2) return false;
  return major > 3 || (major == 3 && minor >= 21);
}

}  // namespace maxcode
