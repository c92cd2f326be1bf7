// Files read back from beneath a root that hostile code could have changed (issue 22,
// points 2 and 3): a link at the file or at any directory on its way is refused, never
// followed; a FIFO never blocks; a size cap holds; no error carries the file's bytes.
// Each case runs twice: through openat2, and through the walk used where the kernel has
// no openat2.
#include "runner/util/beneath.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;
using Kind = BeneathError::Kind;

constexpr const char* kSecret = "root:SECRET-BYTES-9f2c:0:0";

class Beneath : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    resolve_beneath_by_walk_for_tests(GetParam());
    root_ = dir_ / "ws";
    fs::create_directories(root_ / "out");
    fs::create_directories(dir_ / "hidden");
    testing::write_file(dir_ / "hidden" / "secret", kSecret);
    testing::write_file(dir_ / "hidden" / "calls.txt", kSecret);
    testing::write_file(root_ / "out" / "calls.txt", "call 0 5\n");
  }
  void TearDown() override { resolve_beneath_by_walk_for_tests(false); }

  // The kind of error reading `path` gives, checking that its message names the path and
  // carries none of the secret's bytes.
  Kind error_of(const fs::path& path, std::size_t max = 1 << 20) {
    try {
      read_beneath(root_, path, max);
    } catch (const BeneathError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find("SECRET"), std::string::npos) << what;
      EXPECT_EQ(what.rfind(e.relative(), 0), 0u) << what;
      return e.kind();
    }
    ADD_FAILURE() << path << " was read";
    return Kind::kIo;
  }

  testing::TempDir dir_;
  fs::path root_;
};

TEST_P(Beneath, ReadsARegularFileByRelativeOrAbsolutePath) {
  EXPECT_EQ(read_beneath(root_, "out/calls.txt", 100), "call 0 5\n");
  EXPECT_EQ(read_beneath(root_, root_ / "out" / "calls.txt", 100), "call 0 5\n");
  EXPECT_EQ(read_beneath(root_, "./out//calls.txt", 100), "call 0 5\n");
}

TEST_P(Beneath, ALinkAtTheFileIsRefused) {
  fs::create_symlink(dir_ / "hidden" / "secret", root_ / "out" / "record.bin");
  EXPECT_EQ(error_of("out/record.bin"), Kind::kLink);
  // Even one that stays inside the root: a candidate's link is never followed.
  fs::create_symlink("calls.txt", root_ / "out" / "inside.txt");
  EXPECT_EQ(error_of("out/inside.txt"), Kind::kLink);
}

TEST_P(Beneath, ALinkedDirectoryOnTheWayIsRefused) {
  fs::remove_all(root_ / "out");
  fs::create_symlink(dir_ / "hidden", root_ / "out");
  EXPECT_EQ(error_of("out/calls.txt"), Kind::kLink);
  try {
    read_beneath(root_, "out/calls.txt", 100);
  } catch (const BeneathError& e) {
    EXPECT_EQ(std::string(e.what()), "out/calls.txt: out is a symbolic link, not followed");
  }
  EXPECT_THROW(list_beneath(root_, "out"), BeneathError);
  EXPECT_THROW(lstat_beneath(root_, "out/calls.txt"), BeneathError);
  EXPECT_THROW(write_beneath(root_, "out/config", "x"), BeneathError);
  EXPECT_THROW(make_dirs_beneath(root_, "out/deeper"), BeneathError);
  EXPECT_FALSE(fs::exists(dir_ / "hidden" / "config"));
  EXPECT_FALSE(fs::exists(dir_ / "hidden" / "deeper"));
}

TEST_P(Beneath, ClimbingOutIsRefused) {
  EXPECT_EQ(error_of("../hidden/secret"), Kind::kLink);
  EXPECT_EQ(error_of("out/../../hidden/secret"), Kind::kLink);
  EXPECT_EQ(error_of(dir_ / "hidden" / "secret"), Kind::kLink);
  fs::create_symlink("/proc/self/root" + (dir_ / "hidden" / "secret").string(), root_ / "magic");
  EXPECT_EQ(error_of("magic"), Kind::kLink);
}

TEST_P(Beneath, AFifoNeverBlocks) {
  ASSERT_EQ(::mkfifo((root_ / "out" / "fifo").c_str(), 0644), 0);
  fs::create_symlink("fifo", root_ / "out" / "to-fifo");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of("out/fifo"), Kind::kNotRegular);
  EXPECT_EQ(error_of("out/to-fifo"), Kind::kLink);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_P(Beneath, KindsOfErrors) {
  EXPECT_EQ(error_of("out/absent"), Kind::kMissing);
  EXPECT_EQ(error_of("absent/calls.txt"), Kind::kMissing);
  EXPECT_EQ(error_of("out/calls.txt/below"), Kind::kMissing);
  EXPECT_EQ(error_of("out"), Kind::kNotRegular);
  EXPECT_EQ(error_of("out/calls.txt", 4), Kind::kTooLarge);
  EXPECT_STREQ(to_string(Kind::kTooLarge), "too-large");
}

TEST_P(Beneath, ListingReportsLinksWithoutFollowingThem) {
  fs::create_symlink(dir_ / "hidden", root_ / "out" / "dir-link");
  fs::create_directories(root_ / "out" / "sub");
  auto entries = list_beneath(root_, "out");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].name, "calls.txt");
  EXPECT_EQ(entries[0].kind, BeneathEntry::Kind::kFile);
  EXPECT_EQ(entries[1].name, "dir-link");
  EXPECT_EQ(entries[1].kind, BeneathEntry::Kind::kLink);
  EXPECT_EQ(entries[2].kind, BeneathEntry::Kind::kDirectory);
  EXPECT_EQ(list_beneath(root_).size(), 1u);
  auto st = lstat_beneath(root_, "out/dir-link");
  ASSERT_TRUE(st);
  EXPECT_TRUE(S_ISLNK(st->st_mode));
  EXPECT_FALSE(lstat_beneath(root_, "out/absent"));
  EXPECT_EQ(read_link_beneath(root_, "out/dir-link"), (dir_ / "hidden").string());
}

TEST_P(Beneath, RemovalNeverLeavesTheRoot) {
  fs::create_directories(root_ / "out" / "sub" / "deep");
  testing::write_file(root_ / "out" / "sub" / "deep" / "f", "x");
  fs::create_symlink(dir_ / "hidden", root_ / "out" / "sub" / "link");
  fs::create_symlink(dir_ / "hidden", root_ / "gpu");
  ::chmod((root_ / "out" / "sub" / "deep").c_str(), 0500);
  // A planted link on the way: nothing beyond it is touched, the link stays.
  std::string error;
  EXPECT_FALSE(remove_beneath(root_, "gpu/secret", &error));
  EXPECT_NE(error.find("symbolic link"), std::string::npos) << error;
  EXPECT_TRUE(fs::exists(dir_ / "hidden" / "secret"));
  EXPECT_TRUE(remove_beneath(root_, "out", &error)) << error;
  EXPECT_FALSE(fs::exists(root_ / "out"));
  EXPECT_TRUE(fs::exists(dir_ / "hidden" / "secret"));
  EXPECT_TRUE(remove_beneath(root_, "absent"));
  EXPECT_TRUE(remove_tree(root_, &error)) << error;
  EXPECT_FALSE(fs::exists(root_));
  EXPECT_TRUE(fs::exists(dir_ / "hidden" / "secret"));
  EXPECT_TRUE(fs::exists(dir_ / "hidden" / "calls.txt"));
}

TEST_P(Beneath, WritesAndMakesDirectoriesBeneath) {
  write_beneath(root_, "calls/run-0/config", "key 1\n");
  EXPECT_EQ(read_beneath(root_, "calls/run-0/config", 100), "key 1\n");
  fs::create_symlink(dir_ / "hidden" / "secret", root_ / "calls" / "run-0" / "planted");
  EXPECT_THROW(write_beneath(root_, "calls/run-0/planted", "x"), BeneathError);
  EXPECT_EQ(testing::read_file(dir_ / "hidden" / "secret"), kSecret);
}

INSTANTIATE_TEST_SUITE_P(Resolver, Beneath, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Walk" : "Openat2"; });

}  // namespace
}  // namespace maxcode
