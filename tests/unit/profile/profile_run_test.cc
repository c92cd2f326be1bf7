// `maxcode profile` on a repository (tests/fixtures/profile/cpu-repo): built in a
// workspace, benchmarks run under the profilers, ranked; a crash or a timeout keeps
// the partial profile; target selection for `maxcode optimize`; the CLI.
#include <gtest/gtest.h>

#include <algorithm>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "runner/profile/profile_run.h"
#include "runner/profile/select.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::source_path;
using testing::TempDir;

// src/work.cpp: crunch() defined on line 6 does 4/5 of the work, prepare() on 12 the rest.
constexpr int kCrunchLine = 6;

class ProfileRun : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = dir_.path() / "repo";
    fs::copy(source_path("tests/fixtures/profile/cpu-repo"), repo_, fs::copy_options::recursive);
    config_ = load_config(repo_ / ".maxcode.json");
  }

  Profile profile(ProfileOptions options = {}) {
    options.repo = repo_;
    options.quiet = true;
    Progress progress(stderr, true);
    return profile_benchmarks(options, config_, progress);
  }

  const ProfileEntry* entry(const Profile& p, const std::string& function) {
    auto it = std::find_if(p.functions.begin(), p.functions.end(), [&](auto& e) { return e.function == function; });
    return it == p.functions.end() ? nullptr : &*it;
  }

  TempDir dir_;
  fs::path repo_;
  Config config_;
};

TEST_F(ProfileRun, RanksTheRepositorysHotFunctionWithItsDefinition) {
  const auto before = list_files(repo_);
  Profile p = profile();
  ASSERT_FALSE(p.functions.empty());
  const ProfileEntry& top = p.functions[0];
  EXPECT_EQ(top.function, "crunch");
  EXPECT_EQ(top.file, "src/work.cpp");
  EXPECT_EQ(top.line, kCrunchLine);
  EXPECT_TRUE(top.in_scope);
  EXPECT_FALSE(top.external);
  EXPECT_NEAR(top.share, 0.8, 0.12);
  const ProfileEntry* main = entry(p, "main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->file, "bench/main.cpp");
  EXPECT_FALSE(main->in_scope);  // scope: src/** only
  ASSERT_EQ(p.runs.size(), 1u);
  EXPECT_EQ(p.runs[0].outcome, "ok");
  EXPECT_EQ(p.runs[0].bound, "cpu-only");
  EXPECT_GT(p.runs[0].samples, 20u);
  EXPECT_GE(p.runs[0].processes, 1);  // the shell and `timeout` rarely live long enough to count
  EXPECT_TRUE(p.warnings.empty() || p.warnings[0].find("CUPTI") != std::string::npos)
      << p.warnings[0];
  EXPECT_EQ(list_files(repo_), before);  // built in a workspace, not here

  // What target selection takes from it.
  auto targets = select_targets(p, 5, kDefaultTargetShare);
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(targets[0].function, "crunch");
  EXPECT_TRUE(std::none_of(targets.begin(), targets.end(), [](auto& t) { return t.function == "main"; }));
}

TEST_F(ProfileRun, WithoutDebugFlagsFunctionsAreFoundByNameAndAWarningSaysSo) {
  ProfileOptions o;
  o.debug_flags = false;
  Profile p = profile(o);
  ASSERT_FALSE(p.functions.empty());
  EXPECT_EQ(p.functions[0].function, "crunch");
  EXPECT_EQ(p.functions[0].file, "src/work.cpp");  // from the sources
  EXPECT_EQ(p.functions[0].line, kCrunchLine);
  EXPECT_TRUE(std::any_of(p.warnings.begin(), p.warnings.end(),
                          [](auto& w) { return w.find("bench.bin has no debug info") != std::string::npos; }));
}

TEST_F(ProfileRun, ACrashKeepsThePartialProfileAndSaysWhatHappened) {
  config_.benchmarks[0].command = "./bench.bin 10 crash";
  Profile p = profile();
  ASSERT_EQ(p.runs.size(), 1u);
  const std::string& outcome = p.runs[0].outcome;
  EXPECT_TRUE(outcome.find("SIGABRT") != std::string::npos || outcome.find("signal 6") != std::string::npos)
      << outcome;
  EXPECT_TRUE(p.runs[0].partial);
  ASSERT_FALSE(p.functions.empty());
  EXPECT_EQ(p.functions[0].function, "crunch");
  EXPECT_TRUE(std::any_of(p.warnings.begin(), p.warnings.end(),
                          [](auto& w) { return w.find("killed by SIGABRT") != std::string::npos; }));
}

TEST_F(ProfileRun, ATimeoutKeepsThePartialProfile) {
  config_.benchmarks[0].command = "./bench.bin 10 forever";
  config_.benchmarks[0].timeout_s = 1;
  Profile p = profile();
  ASSERT_EQ(p.runs.size(), 1u);
  EXPECT_EQ(p.runs[0].outcome, "timed out after 1.0 s");
  EXPECT_TRUE(p.runs[0].partial);
  EXPECT_LT(p.runs[0].wall_s, 5);
  ASSERT_FALSE(p.functions.empty());
  EXPECT_EQ(p.functions[0].function, "crunch");
}

TEST_F(ProfileRun, ABuildFailureIsAnError) {
  config_.build.command = "echo 'syntax error here' >&2; false";
  try {
    profile();
    ADD_FAILURE() << "no error";
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("build failed: exit code 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("syntax error here"), std::string::npos);
  }
}

TEST_F(ProfileRun, TargetSelectionPicksTheHottestFunctionInScope) {
  EXPECT_EQ(choose_target_by_profile(repo_, repo_ / ".maxcode.json", config_, true).function, "crunch");
  // Nothing of the repository's own code in scope: an error that shows the hottest.
  config_.scope.include = {"include/**"};
  try {
    choose_target_by_profile(repo_, repo_ / ".maxcode.json", config_, true);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("targets.functions"), std::string::npos) << message;
    EXPECT_NE(message.find("crunch(long) (out of scope)"), std::string::npos) << message;
  }
}

TEST_F(ProfileRun, CommandLineWritesProfileJsonAndPrintsTheTable) {
  // As built: --no-build runs the benchmark where it is, after a build by hand.
  Command build;
  build.shell = "c++ -O1 -g -Isrc -o bench.bin src/work.cpp bench/main.cpp";
  build.cwd = repo_.string();
  ASSERT_TRUE(run(build).ok());
  Command c;
  c.shell = std::string(MAXCODE_BINARY) + " profile " + repo_.string() + " --no-build --top 3 --out " +
            (dir_.path() / "out").string();
  c.timeout_s = 120;
  Outcome o = run(c);
  ASSERT_TRUE(o.ok()) << o.tail();
  EXPECT_NE(o.out.find("share"), std::string::npos);
  const std::size_t first_row = o.out.find("\n   1 ");
  ASSERT_NE(first_row, std::string::npos) << o.out;
  EXPECT_NE(o.out.find("crunch(long)", first_row), std::string::npos);
  EXPECT_NE(o.out.find("src/work.cpp:6"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("cpu-only"), std::string::npos);
  auto json = nlohmann::json::parse(read_text(dir_.path() / "out" / "profile.json"));
  EXPECT_EQ(json["format"], "maxcode-profile/2");
  EXPECT_EQ(json["functions"][0]["function"], "crunch");
  EXPECT_EQ(json["functions"][0]["in_scope"], true);
  EXPECT_TRUE(json["kernels"].empty());
  EXPECT_EQ(json["benchmarks"][0]["outcome"], "ok");

  // --import ranks existing files, and a broken one is an error naming its line.
  write_text(dir_.path() / "bad.perf", "bench 1 1.0: 1 cpu-clock:\n\tnowhere foo (x)\n");
  Command bad;
  bad.shell = std::string(MAXCODE_BINARY) + " profile " + repo_.string() + " --import " +
              (dir_.path() / "bad.perf").string() + " --out " + (dir_.path() / "out2").string();
  Outcome b = run(bad);
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.err.find("bad.perf:2:"), std::string::npos) << b.err;

  // A profile.json imported alone prints its table again; an unknown format is refused.
  Command again;
  again.shell = std::string(MAXCODE_BINARY) + " profile " + repo_.string() + " --import " +
                (dir_.path() / "out" / "profile.json").string() + " --out " + (dir_.path() / "out3").string();
  Outcome a = run(again);
  ASSERT_TRUE(a.ok()) << a.tail();
  EXPECT_NE(a.out.find("crunch(long)"), std::string::npos) << a.out;
  json["format"] = "maxcode-profile/3";
  write_text(dir_.path() / "future.json", json.dump());
  Command future;
  future.shell = std::string(MAXCODE_BINARY) + " profile " + repo_.string() + " --import " +
                 (dir_.path() / "future.json").string() + " --out " + (dir_.path() / "out4").string();
  Outcome f = run(future);
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_NE(f.err.find("future.json: format 'maxcode-profile/3' is not a profile this maxcode reads"), std::string::npos)
      << f.err;
}

}  // namespace
}  // namespace maxcode
