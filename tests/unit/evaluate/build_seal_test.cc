// The seal on build outputs: what a build wrote is sealed, and every way of changing it
// afterwards (new content, a script in its place, a link, a mode, removal) is found,
// also when the file's size and mtime are put back.
#include "runner/evaluate/build_seal.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;

const std::set<std::string> kSources = {"src/a.cc", "tests/t.cc"};

// A workspace as create_workspace leaves it: sources, maxcode's home, nothing built.
void make_sources(const fs::path& ws) {
  write_file(ws / "src/a.cc", "int a;");
  write_file(ws / "tests/t.cc", "int t;");
  write_file(ws / "README", "not a source of the manifest, there before the build");
  write_file(ws / ".maxcode-home/.profile", "");
}

// What a build leaves: a benchmark, a library, ctest's file, ninja's logs.
void build(const fs::path& ws) {
  write_file(ws / "build/bench", "\x7f" "ELF the benchmark");
  fs::permissions(ws / "build/bench", fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  write_file(ws / "build/libsum.a", "!<arch>\n");
  write_file(ws / "build/CTestTestfile.cmake", "add_test(t \"build/test\")\n");
  write_file(ws / "build/.ninja_log", "# ninja log v5\n");
  fs::create_symlink("libsum.a", ws / "build/libsum-latest.a");
  write_file(ws / ".maxcode-home/.cache/x", "the build's cache, in maxcode's own directory");
}

std::set<std::string> sealed_paths(const BuildSeal& seal) {
  std::set<std::string> paths;
  for (const auto& [path, file] : seal.files) paths.insert(path);
  return paths;
}

BuildSeal first_build(const fs::path& ws) {
  make_sources(ws);
  auto before = stat_tree(ws, kSources);
  build(ws);
  return seal_build(ws, before, {}, kSources);
}

TEST(BuildSeal, SealsWhatTheBuildWroteAndNothingElse) {
  TempDir dir;
  BuildSeal seal = first_build(dir.path());
  EXPECT_EQ(sealed_paths(seal), (std::set<std::string>{"build/CTestTestfile.cmake", "build/bench", "build/libsum-latest.a",
                                                       "build/libsum.a"}));
  EXPECT_EQ(seal.files.at("build/bench").sha256.size(), 64u);
  EXPECT_TRUE(verify_seal(dir.path(), seal).empty());
}

TEST(BuildSeal, AScriptInPlaceOfTheBenchmarkIsFound) {
  TempDir dir;
  BuildSeal seal = first_build(dir.path());
  // As the cheat did: a script printing saved output, moved over the benchmark.
  write_file(dir / "build/bench.new", "#!/bin/sh\necho 42\n");
  fs::permissions(dir / "build/bench.new", fs::perms::owner_all);
  fs::rename(dir / "build/bench.new", dir / "build/bench");
  auto breaks = verify_seal(dir.path(), seal);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].path, "build/bench");
  EXPECT_NE(breaks[0].what.find("content changed"), std::string::npos) << breaks[0].what;
  EXPECT_EQ(describe(breaks).find("build/bench ("), 0u) << describe(breaks);
}

TEST(BuildSeal, SameSizeAndMtimePutBackIsStillFound) {
  TempDir dir;
  BuildSeal seal = first_build(dir.path());
  struct stat st;
  ASSERT_EQ(::stat((dir / "build/libsum.a").c_str(), &st), 0);
  write_file(dir / "build/libsum.a", "!<arch>X");  // same size
  timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "build/libsum.a").c_str(), times, 0), 0);
  auto breaks = verify_seal(dir.path(), seal);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].path, "build/libsum.a");
}

TEST(BuildSeal, LinksModesAndRemovalsAreFound) {
  TempDir dir;
  BuildSeal seal = first_build(dir.path());
  fs::remove(dir / "build/bench");
  fs::create_symlink("/bin/true", dir / "build/bench");
  fs::permissions(dir / "build/CTestTestfile.cmake", fs::perms::others_write, fs::perm_options::add);
  fs::remove(dir / "build/libsum.a");
  fs::remove(dir / "build/libsum-latest.a");
  fs::create_symlink("elsewhere.a", dir / "build/libsum-latest.a");
  auto breaks = verify_seal(dir.path(), seal);
  ASSERT_EQ(breaks.size(), 4u) << describe(breaks);
  EXPECT_EQ(breaks[0].path, "build/CTestTestfile.cmake");
  EXPECT_NE(breaks[0].what.find("mode 0"), std::string::npos) << breaks[0].what;
  EXPECT_EQ(breaks[1].what, "replaced by a symbolic link");
  EXPECT_EQ(breaks[2].what, "it points elsewhere");
  EXPECT_EQ(breaks[3].what, "removed");
}

TEST(BuildSeal, RewritingTheSameContentOrTouchingIsNoChange) {
  TempDir dir;
  BuildSeal seal = first_build(dir.path());
  write_file(dir / "build/CTestTestfile.cmake", "add_test(t \"build/test\")\n");
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir / "build/libsum.a").c_str(), nullptr, 0), 0);
  // What runs write beside the outputs is theirs: logs, ninja's bookkeeping, the home.
  write_file(dir / "build/Testing/Temporary/LastTest.log", "ran");
  write_file(dir / "build/.ninja_log", "# ninja log v5\nmore\n");
  write_file(dir / ".maxcode-home/.cache/x", "changed");
  EXPECT_TRUE(verify_seal(dir.path(), seal).empty()) << describe(verify_seal(dir.path(), seal));
}

TEST(BuildSeal, ARebuildKeepsTheSealAndAddsOnlyWhatItWrote) {
  TempDir dir;
  BuildSeal seal = first_build(dir.path());
  // A test run leaves a log; then a rebuild relinks the benchmark and drops the link.
  write_file(dir / "build/Testing/Temporary/LastTest.log", "ran");
  auto before = stat_tree(dir.path(), kSources);
  write_file(dir / "build/bench", "\x7f" "ELF the benchmark, relinked");
  write_file(dir / "build/shim.o", "\x7f" "ELF");
  fs::remove(dir / "build/libsum-latest.a");
  BuildSeal again = seal_build(dir.path(), before, seal, kSources);
  EXPECT_EQ(sealed_paths(again), (std::set<std::string>{"build/CTestTestfile.cmake", "build/bench", "build/libsum.a",
                                                        "build/shim.o"}));
  EXPECT_NE(again.files.at("build/bench").sha256, seal.files.at("build/bench").sha256);
  EXPECT_TRUE(verify_seal(dir.path(), again).empty());
}

TEST(BuildSeal, DescribeListsAFewAndCountsTheRest) {
  std::vector<SealBreak> breaks;
  for (int i = 0; i < 7; ++i) breaks.push_back({"o" + std::to_string(i), "removed"});
  EXPECT_EQ(describe(breaks, 2), "o0 (removed), o1 (removed) and 5 more");
}

}  // namespace
}  // namespace maxcode
