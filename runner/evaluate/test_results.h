// What a test run's frameworks said, beyond its exit code (issue 22, point 7).
//
// A test program can exit 0 whatever its tests found (an `atexit` handler that calls
// `_exit(0)` in candidate code, say), so the test step asks the frameworks themselves:
// GoogleTest programs write a JSON report into the folder named by GTEST_OUTPUT
// (`<program>.json`, then `<program>_1.json`, ... when one runs again), and ctest, run
// through maxcode's wrapper, writes a JUnit XML report (`ctest-*.xml`) there too. The
// original's run is the measure: a candidate's run fails when a test fails that passed
// on the original, when a test that ran on the original did not run (filtered out,
// skipped, its program gone), or when a program that reported on the original wrote no
// report, whatever the command's exit code. Where no framework reports on the original,
// the exit code alone judges the tests (the record says so).
//
// The folder lies in the candidate's workspace, where its code could write: every file
// is read without following a symbolic link, only as a regular file, under caps on
// the count and size; a malformed file is a clear error naming it. Known limit: candidate
// code that forges a passing report goes unseen here (the output comparison and the call
// check still apply).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

struct TestCase {
  enum class Status { kPassed, kFailed, kSkipped };
  std::string framework;  // "gtest" or "ctest"
  std::string program;    // gtest: the program's report name ("scale_test"); ctest: "ctest"
  std::string suite;      // gtest: the test suite; ctest: "" (a ctest test is one name)
  std::string name;
  Status status = Status::kPassed;
  bool ran() const { return status != Status::kSkipped; }
  std::string full_name() const;  // "scale_test: ScaleTest.Small", "ctest: scale"
};

struct TestResults {
  // The report files read, by name within the folder, sorted; and the programs they
  // came from ("gtest scale_test", "ctest").
  std::vector<std::string> files;
  std::vector<std::string> programs;
  std::vector<TestCase> tests;
  // Failures a framework reported outside any test (a GoogleTest environment's SetUp).
  int unattributed_failures = 0;

  bool reported() const { return !files.empty(); }
  int count(TestCase::Status status) const;
  int ran() const;
  // "gtest: 12 ran (11 passed, 1 failed), 2 skipped; ctest: 1 ran (1 passed)", or
  // "no test framework reported".
  std::string summary() const;
  void append(TestResults other);
};

// Caps on what a test run's folder may hold (a candidate could fill it).
struct TestResultLimits {
  std::size_t max_files = 20000;              // entries of the folder
  std::size_t max_file_bytes = 16u << 20;     // one report
  std::size_t max_total_bytes = 256u << 20;   // all of them
};

// Parsers of one report's text; `label` names it in errors. Both throw
// std::runtime_error ("<label>: ...") for a document that is not such a report.
// A GoogleTest listing (--gtest_list_tests, as ctest's test discovery writes it) has
// no run tests and adds none.
TestResults parse_gtest_json(const std::string& text, const std::string& label, const std::string& program);
TestResults parse_junit_xml(const std::string& text, const std::string& label, const std::string& program);

// Every report in `dir` (`*.json` from GoogleTest, `ctest-*.xml` from the wrapper; other
// entries are ignored); a missing folder reads as no report. Throws std::runtime_error
// naming the file for a link, a non-regular file, one over the caps or one that does
// not parse.
TestResults read_test_results(const std::filesystem::path& dir, const TestResultLimits& limits = {});

// The program a GoogleTest report file is from: "scale_test.json" and
// "scale_test_3.json" are both "scale_test".
std::string gtest_program_of(const std::string& file_name);

// Empty when `candidate` reports at least what `original` does: no failure of a test
// that did not fail on the original (nor outside any test), every test that ran on
// the original ran again, every reporting program reported. Else the reason, naming
// the tests.
std::string judge_test_results(const TestResults& original, const TestResults& candidate);

// What the original's report holds that is not held against candidates (tests that
// fail on the original while its command exits 0); empty when none.
std::string original_test_failures(const TestResults& original);

// {"reported", "files", "programs", "ran", "passed", "failed", "skipped",
//  "frameworks": {"gtest": {...}, "ctest": {...}}, "suites": [{framework, program, suite, ran, passed, failed, skipped}]}
nlohmann::json to_json(const TestResults& results);

// The ctest wrapper (a shell script) that adds `--output-junit` to a run of `real_ctest`,
// writing into the folder named by MAXCODE_TEST_RESULTS; runs of ctest that report
// nothing (-N, --version, a dashboard script) or that already ask for JUnit pass through.
std::string ctest_wrapper_script(const std::string& real_ctest);
// Whether a "ctest version X.Y.Z" line names a ctest with --output-junit (3.21 or later).
bool ctest_writes_junit(const std::string& version_output);

}  // namespace maxcode
