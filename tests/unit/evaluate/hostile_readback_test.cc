// Hostile candidates against maxcode's read-backs (issue 22, points 2 and 3), end to end:
// `maxcode optimize --policy replay` over a copy of an example, with candidates that
// compute honestly and then, inside their runs, replace what maxcode reads back after
// the run:
//   (a) each output the call shim recorded, by a link to a host file the sandbox hides;
//   (b) the whole directory of the call records, by a link to a directory outside that
//       holds a secret under the records' names;
//   (c) a source file, by a link to a FIFO (maxcode once blocked on it for ever);
//   (d) the Google Benchmark JSON maxcode times by, by a link to a secret.
// maxcode runs outside the sandbox: each must end as a verdict with a reason, nothing
// followed, nothing blocked, no byte of a secret anywhere in what maxcode writes or
// prints; the honest candidate still wins.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "runner/util/files.h"
#include "runner/util/process.h"
#include "support/fixture_repo.h"
#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr const char* kSecret = "SECRET-7c1d-host-file";

// Everything maxcode left in `dir` (result, report, trajectory, checkpoint, store) and
// printed: none of it may hold the secret.
std::string everything_under(const fs::path& dir) {
  std::string all;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->is_symlink()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    all.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return all;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// One optimize run, made once for a suite.
struct HostileRun {
  TempDir dir;
  Outcome outcome;
  nlohmann::json result;
  std::string written;  // every file under out/
};

nlohmann::json candidate_of(const nlohmann::json& result, const std::string& id) {
  for (const auto& c : result["candidates"])
    if (c.value("id", "") == id) return c;
  return nullptr;
}

void run_optimize(HostileRun& r, const std::string& env, const char* tag) {
  Command c;
  c.shell = env + std::string(MAXCODE_BINARY) + " optimize " + (r.dir / "repo").string() +
            " --policy replay --replay-dir " + (r.dir / "replay").string() + " --out " + (r.dir / "out").string() + " -q";
  // Never a hang: a run that blocks on a FIFO ends here, and the suite fails.
  c.timeout_s = 1200;
  r.outcome = run(c);
  if (fs::exists(r.dir / "out" / "result.json")) r.result = nlohmann::json::parse(read_text(r.dir / "out" / "result.json"));
  r.written = everything_under(r.dir / "out");
  if (r.result.is_object())
    for (const auto& candidate : r.result["candidates"])
      std::printf("%-6s %-26s %-10s %s\n", tag, candidate.value("id", "").c_str(), candidate.value("verdict", "").c_str(),
                  candidate.value("reason", "").substr(0, 260).c_str());
}

void expect_no_secret(const HostileRun& r) {
  EXPECT_FALSE(r.outcome.timed_out) << "maxcode hung";
  EXPECT_EQ(r.written.find(kSecret), std::string::npos) << "a secret reached maxcode's output files";
  EXPECT_EQ(r.outcome.out.find(kSecret), std::string::npos) << r.outcome.out;
  EXPECT_EQ(r.outcome.err.find(kSecret), std::string::npos) << r.outcome.err;
}

void expect_verdict(const nlohmann::json& result, const std::string& id, const std::vector<std::string>& verdicts,
                    const std::vector<std::string>& words) {
  const nlohmann::json c = candidate_of(result, id);
  ASSERT_TRUE(c.is_object()) << id;
  const std::string verdict = c.value("verdict", ""), reason = c.value("reason", "");
  EXPECT_NE(std::find(verdicts.begin(), verdicts.end(), verdict), verdicts.end()) << id << ": " << verdict << ": " << reason;
  for (const std::string& w : words) EXPECT_NE(reason.find(w), std::string::npos) << id << ": " << reason;
  EXPECT_EQ(reason.find(kSecret), std::string::npos) << id << ": " << reason;
}

// The honest rewrite of examples/cpu-plain, and hostile hooks registered before main,
// run at exit (after the call shim has written its records).
constexpr const char* kHookHeader = R"(#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
)";

// (a) every out-*.bin the shim recorded becomes a link to the secret.
constexpr const char* kLinkOutputs = R"(
static void blur_plant_links() {
  const char* dir = std::getenv("MAXCODE_SHIM_DIR");
  if (!dir || !*dir) return;
  std::vector<std::string> names;
  if (DIR* listing = opendir(dir)) {
    while (const dirent* entry = readdir(listing))
      if (std::string(entry->d_name).rfind("out-", 0) == 0) names.push_back(entry->d_name);
    closedir(listing);
  }
  for (const std::string& name : names) {
    const std::string path = std::string(dir) + "/" + name;
    unlink(path.c_str());
    symlink("@SECRET_FILE@", path.c_str());
  }
}
__attribute__((constructor(101))) static void blur_register_links() { std::atexit(blur_plant_links); }
)";

// (b) the records' directory becomes a link to a directory outside holding a secret
// under the records' own names.
constexpr const char* kLinkDirectory = R"(
static void blur_swap_directory() {
  const char* dir = std::getenv("MAXCODE_SHIM_DIR");
  if (!dir || !*dir) return;
  const std::string moved = std::string(dir) + ".moved";
  if (std::rename(dir, moved.c_str()) == 0) symlink("@SECRET_DIR@", dir);
}
__attribute__((constructor(101))) static void blur_register_swap() { std::atexit(blur_swap_directory); }
)";

// (c) a source file becomes a link to a FIFO in the workspace (HOME is inside it).
constexpr const char* kFifoSource = R"(
static void blur_plant_fifo() {
  const char* home = std::getenv("HOME");
  if (!home || !*home) return;
  std::string ws = home;
  ws = ws.substr(0, ws.find_last_of('/'));
  const std::string fifo = ws + "/.blur-fifo";
  mkfifo(fifo.c_str(), 0644);
  const std::string source = ws + "/src/blur.h";
  struct stat st;
  if (lstat(source.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return;
  unlink(source.c_str());
  symlink(fifo.c_str(), source.c_str());
}
__attribute__((constructor(101))) static void blur_register_fifo() { std::atexit(blur_plant_fifo); }
)";

class HostileShimSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new HostileRun;
    HostileRun& r = *run_;
    testing::copy_example_with_short_timing("cpu-plain", r.dir / "repo");
    std::error_code ignored;
    fs::remove_all(r.dir / "repo" / "build", ignored);
    fs::remove_all(r.dir / "repo" / "replay", ignored);
    // The host's files: outside the workspace, in this test's own /tmp directory, which
    // the sandbox hides behind a private /tmp.
    const fs::path secret_file = r.dir / "host" / "secret";
    const fs::path secret_dir = r.dir / "host" / "records";
    testing::write_file(secret_file, std::string(kSecret) + "\n");
    testing::write_file(secret_dir / "calls.txt", std::string(kSecret) + " 0\ncall 0 5\n");
    for (int call = 0; call < 40; ++call)
      testing::write_file(secret_dir / ("out-" + std::to_string(call) + "-out.bin"), std::string(4096, 'S') + kSecret);
    const std::string honest = read_text(testing::source_path("examples/cpu-plain/replay/06-interior-fast-path.cpp"));
    auto hostile = [&](const std::string& name, const std::string& hook) {
      std::string code = std::string(kHookHeader) + hook + "\n" + honest;
      code = replace_all(code, "@SECRET_FILE@", secret_file.string());
      code = replace_all(code, "@SECRET_DIR@", secret_dir.string());
      testing::write_file(r.dir / "replay" / name, code);
    };
    hostile("01-link-outputs.cpp", kLinkOutputs);
    hostile("02-link-record-dir.cpp", kLinkDirectory);
    hostile("03-fifo-source.cpp", kFifoSource);
    testing::write_file(r.dir / "replay" / "04-honest.cpp", honest);
    run_optimize(r, "", "shim");
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(run_->result.is_object()) << run_->outcome.describe() << "\n" << run_->outcome.err << run_->outcome.out;
  }
  static HostileRun* run_;
};

HostileRun* HostileShimSuite::run_ = nullptr;

TEST_F(HostileShimSuite, NoSecretAnywhereAndNoHang) { expect_no_secret(*run_); }

TEST_F(HostileShimSuite, RecordedOutputsReplacedByLinksAreRejected) {
  expect_verdict(run_->result, "01-link-outputs.cpp", {"rejected"}, {"call check", "symbolic link"});
}

TEST_F(HostileShimSuite, ARecordDirectoryReplacedByALinkIsRejected) {
  expect_verdict(run_->result, "02-link-record-dir.cpp", {"rejected"}, {"call check", "symbolic link"});
}

TEST_F(HostileShimSuite, ASourceReplacedByALinkToAFifoIsRejected) {
  expect_verdict(run_->result, "03-fifo-source.cpp", {"rejected"}, {"source files changed", "src/blur.h"});
}

TEST_F(HostileShimSuite, TheHonestCandidateStillWins) {
  const auto& winner = run_->result["winner"];
  ASSERT_TRUE(winner.is_object()) << run_->result.dump(2).substr(0, 4000);
  EXPECT_EQ(winner.value("id", ""), "04-honest.cpp");
}

// (d) The Google Benchmark JSON that timing reads (BENCHMARK_OUT), replaced at exit by a
// link to a secret written as Google Benchmark JSON: were it followed, its "error" would
// be quoted in the reason.
constexpr const char* kLinkBenchmarkJson = R"(#include <unistd.h>

#include <cstdlib>

static void prefix_sum_plant_link() {
  const char* out = std::getenv("BENCHMARK_OUT");
  if (!out || !*out) return;
  unlink(out);
  symlink("@SECRET_FILE@", out);
}
__attribute__((constructor(101))) static void prefix_sum_register() { std::atexit(prefix_sum_plant_link); }

)";

class HostileGoogleBenchmarkSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ = new HostileRun;
    HostileRun& r = *run_;
    copy_tree(testing::source_path("tests/fixtures/gbench-prefix"), r.dir / "repo");
    std::error_code ignored;
    fs::remove_all(r.dir / "repo" / "replay", ignored);
    testing::write_file(r.dir / "repo/.maxcode.json", R"({
      "build": {"configure": "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release", "command": "cmake --build build -j"},
      "test": {"command": "ctest --test-dir build --output-on-failure"},
      "benchmarks": [{"name": "prefix", "command": "./build/prefix_bench", "metric": "google-benchmark"}],
      "scope": {"include": ["src/**"]},
      "targets": {"functions": ["prefix_sum"]},
      "acceptance": {"min_rounds": 3, "max_rounds": 5, "warmup_rounds": 0},
      "workspace": {"env_allow": ["BENCHMARK_MIN_TIME"]}
    })");
    const fs::path secret_file = r.dir / "host" / "secret.json";
    testing::write_file(secret_file, std::string(R"({"benchmarks": [{"name": ")") + kSecret +
                                         R"(", "error_occurred": true, "error_message": ")" + kSecret + R"("}]})");
    const std::string honest =
        read_text(testing::source_path("tests/fixtures/gbench-prefix/replay/01-running-total.cc"));
    testing::write_file(r.dir / "replay" / "01-link-json.cc",
                        replace_all(kLinkBenchmarkJson, "@SECRET_FILE@", secret_file.string()) + honest);
    testing::write_file(r.dir / "replay" / "02-honest.cc", honest);
    run_optimize(r, "BENCHMARK_MIN_TIME=0.02 ", "gbench");
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(run_->result.is_object()) << run_->outcome.describe() << "\n" << run_->outcome.err << run_->outcome.out;
  }
  static HostileRun* run_;
};

HostileRun* HostileGoogleBenchmarkSuite::run_ = nullptr;

TEST_F(HostileGoogleBenchmarkSuite, NoSecretAnywhereAndNoHang) { expect_no_secret(*run_); }

TEST_F(HostileGoogleBenchmarkSuite, AJsonReplacedByALinkIsRejected) {
  expect_verdict(run_->result, "01-link-json.cc", {"rejected"}, {"Google Benchmark output", "symbolic link"});
}

TEST_F(HostileGoogleBenchmarkSuite, TheHonestCandidateStillWins) {
  const auto& winner = run_->result["winner"];
  ASSERT_TRUE(winner.is_object()) << run_->result.dump(2).substr(0, 4000);
  EXPECT_EQ(winner.value("id", ""), "02-honest.cc");
}

}  // namespace
}  // namespace maxcode
