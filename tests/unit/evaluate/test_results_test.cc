// The test frameworks' reports (runner/evaluate/test_results.h): the parsers of
// GoogleTest JSON and JUnit XML, reading a folder a candidate could write into, the
// judgement against the original's run, the ctest wrapper; and, end to end, `maxcode
// optimize` over tests/fixtures/gtest-dot, whose hostile candidates make a test program
// exit 0 whatever its tests found (issue 22, point 7).
#include "runner/evaluate/test_results.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/fixture_repo.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// What GoogleTest 1.12 writes with GTEST_OUTPUT=json:<dir>/.
std::string gtest_report(const std::string& tests, int failures = 0) {
  return R"({"tests": 4, "failures": )" + std::to_string(failures) +
         R"(, "disabled": 0, "errors": 0, "name": "AllTests", "testsuites": [{"name": "DotTest", "tests": 4, "testsuite": [)" +
         tests + "]}]}";
}
const char* kPassed = R"({"name": "Small", "status": "RUN", "result": "COMPLETED", "classname": "DotTest"})";
const char* kFailed =
    R"({"name": "Large", "status": "RUN", "result": "COMPLETED", "failures": [{"failure": "dot.cc:3\nExpected equality", "type": ""}]})";
const char* kSkipped = R"({"name": "Gpu", "status": "RUN", "result": "SKIPPED"})";
const char* kDisabled = R"({"name": "DISABLED_Slow", "status": "NOTRUN", "result": "SUPPRESSED"})";

// What ctest 3.25 writes with --output-junit.
const char* kJunit = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="3" failures="1" disabled="0" skipped="1" hostname="" time="0" timestamp="2026-11-27T07:50:31">
	<testcase name="dot" classname="dot" time="0.01" status="run"><system-out>ok &amp; fine</system-out></testcase>
	<testcase name="scale" classname="scale" time="0.02" status="fail"><failure message="Failed"/><system-out>no</system-out></testcase>
	<testcase name="gpu" classname="gpu" time="0" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/></testcase>
</testsuite>
)xml";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// ---- GoogleTest JSON ----

TEST(GtestJson, CountsPassedFailedAndSkippedTests) {
  TestResults r = parse_gtest_json(gtest_report(std::string(kPassed) + "," + kFailed + "," + kSkipped + "," + kDisabled, 1),
                                   "dot_test.json", "dot_test");
  ASSERT_EQ(r.tests.size(), 4u);
  EXPECT_EQ(r.ran(), 2);
  EXPECT_EQ(r.count(TestCase::Status::kPassed), 1);
  EXPECT_EQ(r.count(TestCase::Status::kFailed), 1);
  EXPECT_EQ(r.count(TestCase::Status::kSkipped), 2);
  EXPECT_EQ(r.tests[1].full_name(), "dot_test: DotTest.Large");
  EXPECT_EQ(r.unattributed_failures, 0);
  EXPECT_EQ(r.programs, std::vector<std::string>{"gtest dot_test"});
}

TEST(GtestJson, AFailureOutsideAnyTestIsCounted) {
  TestResults r = parse_gtest_json(gtest_report(kPassed, 2), "t.json", "t");
  EXPECT_EQ(r.unattributed_failures, 2);
}

// ctest's test discovery runs `--gtest_list_tests`, which writes the same file with
// names only: no test ran.
TEST(GtestJson, AListingAddsNoTest) {
  TestResults r = parse_gtest_json(
      R"({"tests": 1, "name": "AllTests", "testsuites": [{"name": "DotTest", "tests": 1, "testsuite": [{"name": "Small", "file": "t.cc", "line": 3}]}]})",
      "t.json", "t");
  EXPECT_TRUE(r.tests.empty());
  EXPECT_EQ(r.programs.size(), 1u);
}

TEST(GtestJson, MalformedReportsAreClearErrorsNamingTheFile) {
  EXPECT_EQ(error_of([] { parse_gtest_json("", "/ws/r/a.json", "a"); }), "/ws/r/a.json: not GoogleTest JSON: the file is empty");
  EXPECT_EQ(error_of([] { parse_gtest_json(R"({"testsuites": [)", "/ws/r/a.json", "a"); }),
            "/ws/r/a.json: not GoogleTest JSON: syntax error at byte 17");
  EXPECT_EQ(error_of([] { parse_gtest_json(R"({"tests": 3})", "a.json", "a"); }),
            "a.json: not GoogleTest JSON (no \"testsuites\" array)");
  EXPECT_EQ(error_of([] { parse_gtest_json(R"({"testsuites": [{"name": "S", "testsuite": 7}]})", "a.json", "a"); }),
            "a.json: suite 'S': \"testsuite\" is not an array");
  // Deep nesting: an error, not a crash.
  const std::string deep = R"({"testsuites": )" + std::string(200000, '[') + std::string(200000, ']') + "}";
  EXPECT_EQ(error_of([&] { parse_gtest_json(deep, "a.json", "a"); }), "a.json: not GoogleTest JSON: nested deeper than 32 levels");
}

// The error must be fit for result.json: it never quotes the bytes that broke the parse.
TEST(GtestJson, InvalidUtf8IsAnErrorThatQuotesNoByte) {
  const std::string bad = std::string(R"({"testsuites": [{"name": "S)") + "\xff\xfe" + R"("}]})";
  const std::string error = error_of([&] { parse_gtest_json(bad, "a.json", "a"); });
  EXPECT_EQ(error, "a.json: not GoogleTest JSON: syntax error at byte 28");
  EXPECT_NO_THROW(nlohmann::json(error).dump());
}

TEST(GtestJson, ProgramOfAReportFile) {
  EXPECT_EQ(gtest_program_of("dot_test.json"), "dot_test");
  EXPECT_EQ(gtest_program_of("dot_test_3.json"), "dot_test");
  EXPECT_EQ(gtest_program_of("dot_test_x.json"), "dot_test_x");
  EXPECT_EQ(gtest_program_of("_1.json"), "_1");
}

// ---- JUnit XML ----

TEST(JunitXml, CountsCtestsReport) {
  TestResults r = parse_junit_xml(kJunit, "ctest-1-0.xml", "ctest");
  ASSERT_EQ(r.tests.size(), 3u);
  EXPECT_EQ(r.tests[0].status, TestCase::Status::kPassed);
  EXPECT_EQ(r.tests[1].status, TestCase::Status::kFailed);
  EXPECT_EQ(r.tests[2].status, TestCase::Status::kSkipped);
  EXPECT_EQ(r.tests[1].full_name(), "ctest: scale");
  EXPECT_EQ(r.ran(), 2);
}

TEST(JunitXml, AFailureElementFailsATestWhateverItsStatus) {
  TestResults r = parse_junit_xml(R"(<testsuites><testsuite><testcase name="a"><error message="x"/></testcase></testsuite></testsuites>)",
                                  "j.xml", "ctest");
  ASSERT_EQ(r.tests.size(), 1u);
  EXPECT_EQ(r.tests[0].status, TestCase::Status::kFailed);
}

TEST(JunitXml, MalformedReportsAreClearErrorsNamingTheFile) {
  EXPECT_EQ(error_of([] { parse_junit_xml("", "/ws/r/ctest-1-0.xml", "ctest"); }),
            "/ws/r/ctest-1-0.xml: not a JUnit report: the file is empty");
  EXPECT_EQ(error_of([] { parse_junit_xml("<testsuite><testcase name=\"a\">", "j.xml", "ctest"); }),
            "j.xml: not a JUnit report: no element found at line 1");
  EXPECT_EQ(error_of([] { parse_junit_xml("<html/>", "j.xml", "ctest"); }), "j.xml: not a JUnit report: its root element is <html>, not <testsuites> or <testsuite>");
  EXPECT_EQ(error_of([] { parse_junit_xml("<testsuite><testcase/></testsuite>", "j.xml", "ctest"); }),
            "j.xml: not a JUnit report: a <testcase> without a name (line 1)");
  EXPECT_EQ(error_of([] { parse_junit_xml("<testsuite>\xff</testsuite>", "j.xml", "ctest"); }),
            "j.xml: not a JUnit report: not well-formed (invalid token) at line 1");
  std::string deep = "<testsuites>";
  for (int i = 0; i < 100000; ++i) deep += "<a>";
  EXPECT_EQ(error_of([&] { parse_junit_xml(deep, "j.xml", "ctest"); }), "j.xml: not a JUnit report: nested deeper than 32 elements");
}

// Entities could make a small file large (the "billion laughs"): a report has no DOCTYPE.
TEST(JunitXml, ADoctypeIsRefused) {
  const std::string laughs = R"(<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<testsuite><testcase name="&lol2;"/></testsuite>)";
  EXPECT_EQ(error_of([&] { parse_junit_xml(laughs, "j.xml", "ctest"); }), "j.xml: not a JUnit report: has a DOCTYPE (a JUnit report has none)");
}

// ---- the folder ----

TEST(ReadTestResults, ReadsEveryReportOfTheFolder) {
  TempDir dir;
  write_text(dir / "dot_test.json", gtest_report(kPassed));
  write_text(dir / "dot_test_1.json", gtest_report(kSkipped));
  write_text(dir / "ctest-7-0.xml", kJunit);
  write_text(dir / "notes.txt", "not a report");
  TestResults r = read_test_results(dir.path());
  EXPECT_EQ(r.files, (std::vector<std::string>{"ctest-7-0.xml", "dot_test.json", "dot_test_1.json"}));
  EXPECT_EQ(r.programs, (std::vector<std::string>{"ctest", "gtest dot_test"}));
  EXPECT_EQ(r.tests.size(), 5u);
  EXPECT_EQ(r.summary(), "ctest: 2 ran (1 passed, 1 failed), 1 skipped; gtest: 1 ran (1 passed), 1 skipped (3 report files)");
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["ran"], 3);
  EXPECT_EQ(j["frameworks"]["gtest"]["skipped"], 1);
  EXPECT_EQ(j["suites"].size(), 2u);
}

TEST(ReadTestResults, AMissingFolderIsNoReport) {
  TempDir dir;
  TestResults r = read_test_results(dir / "none");
  EXPECT_FALSE(r.reported());
  EXPECT_EQ(r.summary(), "no test framework reported (the exit code alone judges the tests)");
}

// A candidate may plant a link to a file maxcode can read and the sandbox hides: never
// followed, neither for a report nor for the folder.
TEST(ReadTestResults, ALinkIsNeverFollowed) {
  TempDir dir;
  write_text(dir / "secret", gtest_report(kPassed));
  fs::create_directories(dir / "r");
  fs::create_symlink(dir / "secret", dir / "r" / "dot_test.json");
  EXPECT_EQ(error_of([&] { read_test_results(dir / "r"); }),
            (dir / "r" / "dot_test.json").string() + ": cannot read it: it is a symbolic link");
  fs::create_directories(dir / "elsewhere");
  fs::create_directory_symlink(dir / "elsewhere", dir / "linked");
  EXPECT_NE(error_of([&] { read_test_results(dir / "linked"); }).find("it is not a folder (a link?)"), std::string::npos);
}

TEST(ReadTestResults, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "dot_test.json").c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { read_test_results(dir.path()); }), (dir / "dot_test.json").string() + ": cannot read it: not a regular file");
}

TEST(ReadTestResults, CapsOnSizeAndCount) {
  TempDir dir;
  write_text(dir / "big.json", gtest_report(kPassed) + std::string(5000, ' '));
  TestResultLimits limits;
  limits.max_file_bytes = 4096;
  EXPECT_EQ(error_of([&] { read_test_results(dir.path(), limits); }), (dir / "big.json").string() + ": larger than 4096 bytes");
  for (int i = 0; i < 6; ++i) write_text(dir / ("t" + std::to_string(i) + ".json"), gtest_report(kPassed));
  limits = {};
  limits.max_files = 5;
  EXPECT_EQ(error_of([&] { read_test_results(dir.path(), limits); }), "test reports in " + dir.path().string() + ": more than 5 entries");
  limits = {};
  limits.max_total_bytes = 1000;
  EXPECT_NE(error_of([&] { read_test_results(dir.path(), limits); }).find("more than 1000 bytes in all"), std::string::npos);
}

TEST(ReadTestResults, AnOddFileNameIsQuotedPrintably) {
  TempDir dir;
  write_text(dir / "a\x01\xff.json", "{");
  EXPECT_EQ(error_of([&] { read_test_results(dir.path()); }),
            (dir / "a\\x01\\xff.json").string() + ": not GoogleTest JSON: syntax error at byte 2");
}

// ---- the judgement ----

TestResults results(const std::string& gtest_tests, int failures = 0) {
  return parse_gtest_json(gtest_report(gtest_tests, failures), "dot_test.json", "dot_test");
}

TEST(JudgeTestResults, TheSameTestsPassing) {
  const std::string both = std::string(kPassed) + "," + kPassed;
  EXPECT_EQ(judge_test_results(results(both), results(both)), "");
}

TEST(JudgeTestResults, AFailedTestIsNamed) {
  EXPECT_EQ(judge_test_results(results(std::string(kPassed) + "," + R"({"name": "Large", "status": "RUN", "result": "COMPLETED"})"),
                               results(std::string(kPassed) + "," + kFailed, 1)),
            "1 test failed by their framework's report: dot_test: DotTest.Large");
}

TEST(JudgeTestResults, FewerTestsAreNamed) {
  const std::string large = R"({"name": "Large", "status": "RUN", "result": "COMPLETED"})";
  const std::string skipped_large = R"({"name": "Large", "status": "RUN", "result": "SKIPPED"})";
  EXPECT_EQ(judge_test_results(results(std::string(kPassed) + "," + large), results(kPassed)),
            "fewer tests ran than on the original (1 of 2); not run: dot_test: DotTest.Large");
  EXPECT_EQ(judge_test_results(results(std::string(kPassed) + "," + large), results(std::string(kPassed) + "," + skipped_large)),
            "fewer tests ran than on the original (1 of 2); not run: dot_test: DotTest.Large");
}

TEST(JudgeTestResults, AProgramThatWroteNoReport) {
  TestResults candidate = parse_junit_xml(kJunit, "ctest-1-0.xml", "ctest");
  TestResults original = candidate;
  original.append(results(kPassed));
  EXPECT_EQ(judge_test_results(original, candidate),
            "no test report from gtest dot_test (the original's run wrote one); fewer tests ran than on the original "
            "(2 of 3); not run: dot_test: DotTest.Small");
}

// A test that fails on the original (its command exits 0 anyway) is not held against
// candidates; it is named once, for the warnings.
TEST(JudgeTestResults, FailuresOfTheOriginalAreNotHeldAgainstCandidates) {
  const TestResults original = results(std::string(kPassed) + "," + kFailed, 1);
  EXPECT_EQ(judge_test_results(original, original), "");
  EXPECT_EQ(original_test_failures(original), "1 test(s) fail on the original code: dot_test: DotTest.Large");
}

TEST(JudgeTestResults, ManyNamesAreShortened) {
  std::string tests;
  for (int i = 0; i < 20; ++i)
    tests += (tests.empty() ? "" : ",") + std::string(R"({"name": "T)") + std::to_string(i) + R"(", "status": "RUN", "result": "COMPLETED"})";
  const std::string reason = judge_test_results(results(tests), results(kPassed));
  EXPECT_NE(reason.find("and 12 more"), std::string::npos) << reason;
}

// ---- the ctest wrapper ----

TEST(CtestWrapper, VersionsThatWriteJunit) {
  EXPECT_TRUE(ctest_writes_junit("ctest version 3.25.1\n\nCMake suite maintained"));
  EXPECT_TRUE(ctest_writes_junit("ctest version 3.21.0"));
  EXPECT_TRUE(ctest_writes_junit("ctest version 4.0.2"));
  EXPECT_FALSE(ctest_writes_junit("ctest version 3.20.5"));
  EXPECT_FALSE(ctest_writes_junit("something else"));
}

TEST(CtestWrapper, AddsAJunitReportAndPassesOtherRunsThrough) {
  TempDir dir;
  // A stand-in for ctest that prints its arguments.
  write_text(dir / "real ctest", "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n");
  write_text(dir / "ctest", ctest_wrapper_script((dir / "real ctest").string()));
  fs::permissions(dir / "real ctest", fs::perms::owner_all);
  fs::permissions(dir / "ctest", fs::perms::owner_all);
  fs::create_directories(dir / "r");
  auto wrapped = [&](const std::string& args) {
    Command c;
    c.shell = shell_quote((dir / "ctest").string()) + " " + args;
    c.env = {{"MAXCODE_TEST_RESULTS", (dir / "r").string()}};
    Outcome o = run(c);
    EXPECT_TRUE(o.ok()) << o.describe() << o.err;
    return o.out;
  };
  const std::string out = wrapped("--test-dir 'build dir' -j2");
  EXPECT_EQ(out.rfind("[--test-dir]\n[build dir]\n[-j2]\n[--output-junit]\n[" + (dir / "r").string() + "/ctest-", 0), 0u) << out;
  EXPECT_NE(out.find("-0.xml]"), std::string::npos) << out;
  EXPECT_EQ(wrapped("-N --test-dir build"), "[-N]\n[--test-dir]\n[build]\n");
  EXPECT_EQ(wrapped("--output-junit mine.xml"), "[--output-junit]\n[mine.xml]\n");
}

// ---- end to end ----

// No framework reports on the sum fixture's tests (a plain program): its exit code
// alone judges them, as before.
TEST(TestReports, APlainTestProgramIsJudgedByItsExitCode) {
  testing::FixtureRepo repo("sum");
  Evaluator& evaluator = repo.evaluator();
  EXPECT_FALSE(evaluator.original_tests().reported());
  Checked c = evaluator.check(evaluator.materialize(testing::definition_candidate(
      "plain", "long long sum_squares(const int* v, int n) { long long s = 0; for (int i = 0; i < n; ++i) s += "
               "square(v[i]); return s; }")));
  // Past the tests (what follows them, the call check, may judge it on a loaded machine).
  EXPECT_NE(c.evaluation.verdict, Verdict::kTestFailed) << c.evaluation.reason;
  EXPECT_FALSE(c.evaluation.tests.value("reported", true)) << c.evaluation.tests.dump();
  EXPECT_EQ(c.evaluation.tests.value("judged_by", ""), "exit code");
  evaluator.release(c);
}

// `maxcode optimize --policy replay` over tests/fixtures/gtest-dot: GoogleTest programs
// run by ctest. Each hostile candidate returns zeros for small inputs (the benchmark's
// are large, so its output matches) and makes the test program exit 0.
class GtestDotSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    copy_tree(testing::source_path("tests/fixtures/gtest-dot"), *dir_ / "repo");
    Command c;
    c.shell = std::string(MAXCODE_BINARY) + " optimize " + (*dir_ / "repo").string() + " --policy replay --replay-dir " +
              testing::source_path("tests/fixtures/gtest-dot/replay").string() + " --out " + (*dir_ / "out").string() + " -q";
    c.timeout_s = 1200;
    outcome_ = new Outcome(run(c));
    result_ = new nlohmann::json;
    if (fs::exists(*dir_ / "out" / "result.json")) *result_ = nlohmann::json::parse(read_text(*dir_ / "out" / "result.json"));
    if (result_->is_object())
      for (const auto& candidate : (*result_)["candidates"])
        std::printf("%-20s %-12s %s\n", candidate.value("id", "").c_str(), candidate.value("verdict", "").c_str(),
                    candidate.value("reason", "").substr(0, 400).c_str());
  }
  static void TearDownTestSuite() {
    delete result_;
    delete outcome_;
    delete dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(result_->is_object()) << outcome_->describe() << "\n" << outcome_->err << outcome_->out;
  }
  static nlohmann::json candidate(const std::string& id) {
    for (const auto& c : (*result_)["candidates"])
      if (c.value("id", "") == id) return c;
    return nullptr;
  }
  static void expect_test_failed(const std::string& id, const std::vector<std::string>& words) {
    const nlohmann::json c = candidate(id);
    ASSERT_TRUE(c.is_object()) << id;
    EXPECT_EQ(c.value("verdict", ""), "test-failed") << id << ": " << c.value("reason", "");
    const std::string reason = c.value("reason", "");
    for (const std::string& w : words) EXPECT_NE(reason.find(w), std::string::npos) << id << ": " << reason;
    // The test step itself exited 0: only the reports caught it.
    for (const auto& step : c["steps"])
      if (step.value("name", "") == "test") EXPECT_EQ(step.value("status", ""), "exit code 0") << id;
  }

  static TempDir* dir_;
  static Outcome* outcome_;
  static nlohmann::json* result_;
};

TempDir* GtestDotSuite::dir_ = nullptr;
Outcome* GtestDotSuite::outcome_ = nullptr;
nlohmann::json* GtestDotSuite::result_ = nullptr;

TEST_F(GtestDotSuite, TheOriginalsTestsAreCounted) {
  const nlohmann::json& tests = (*result_)["tests"];
  EXPECT_TRUE(tests.value("reported", false)) << tests.dump();
  EXPECT_EQ(tests.value("ran", 0), 5) << tests.dump();  // 4 GoogleTest tests, 1 ctest test
  EXPECT_EQ(tests["frameworks"]["gtest"].value("passed", 0), 4) << tests.dump();
  EXPECT_EQ(tests["frameworks"]["ctest"].value("passed", 0), 1) << tests.dump();
  EXPECT_EQ(tests.value("judged_by", ""), "reports");
  const std::string report = read_text(*dir_ / "out" / "report.md");
  EXPECT_NE(report.find("## Tests"), std::string::npos);
  EXPECT_NE(report.find("| gtest | `dot_test` | `DotTest` | 4 | 4 | 0 | 0 |"), std::string::npos) << report;
}

TEST_F(GtestDotSuite, ExitZeroAtExitFailsByTheReport) {
  expect_test_failed("02-exit-zero.cc", {"the test command exited 0", "2 tests failed by their framework's report",
                                         "dot_test: DotTest.SmallInputs", "dot_test: DotTest.NegativeValues"});
  const nlohmann::json c = candidate("02-exit-zero.cc");
  EXPECT_EQ(c["tests"].value("failed", -1), 2) << c["tests"].dump();
  EXPECT_EQ(c["tests"].value("original_ran", -1), 5) << c["tests"].dump();
}

TEST_F(GtestDotSuite, FilteredOutTestsAreFewerResults) {
  expect_test_failed("03-filter.cc", {"fewer tests ran than on the original (3 of 5)", "dot_test: DotTest.NegativeValues",
                                      "dot_test: DotTest.SmallInputs"});
}

TEST_F(GtestDotSuite, AProgramThatWritesNoReportFails) {
  expect_test_failed("04-no-report.cc", {"no test report from gtest dot_test (the original's run wrote one)"});
}

TEST_F(GtestDotSuite, TheHonestCandidateStillPasses) {
  const nlohmann::json c = candidate("01-honest.cc");
  ASSERT_TRUE(c.is_object());
  const std::string verdict = c.value("verdict", "");
  EXPECT_TRUE(verdict == "faster" || verdict == "not-faster" || verdict == "unverifiable")
      << verdict << ": " << c.value("reason", "");
  EXPECT_EQ(c["tests"].value("ran", 0), 5) << c["tests"].dump();
  EXPECT_EQ(c["tests"].value("failed", -1), 0) << c["tests"].dump();
}

}  // namespace
}  // namespace maxcode
