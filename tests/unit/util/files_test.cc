// Paths named by hostile inputs (issue 22, point 9): `..` in a job's config or
// replay_dir, or a symbolic link in the repository, must not lead out of the clone.
#include "runner/util/files.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace maxcode {
namespace {

namespace fs = std::filesystem;

TEST(Files, EscapesRootReadsTheTextOfAPath) {
  for (const char* inside : {"", ".maxcode.json", "ci/maxcode.json", "./a/b", "a/../b", "a/b/../../c", "a//b/.", "..a/b",
                             "a/.."})
    EXPECT_FALSE(escapes_root(inside)) << inside;
  for (const char* outside : {"/etc/passwd", "..", "../x", "a/../../x", "./../x", "a/b/../../../x", "ci/../../../../etc"})
    EXPECT_TRUE(escapes_root(outside)) << outside;
  EXPECT_FALSE(escapes_root(std::string(50'000'000, 'a')));  // long, and no crash
}

TEST(Files, ResolvesInsideFollowsLinks) {
  testing::TempDir dir;
  const fs::path root = dir / "clone";
  fs::create_directories(root / "ci");
  fs::create_directories(dir / "elsewhere");
  testing::write_file(root / "ci" / "maxcode.json", "{}");
  testing::write_file(dir / "elsewhere" / "secret.json", "{}");
  fs::create_symlink(dir / "elsewhere", root / "link");
  fs::create_symlink("../../elsewhere/secret.json", root / "ci" / "relative.json");

  EXPECT_TRUE(resolves_inside(root, root));
  EXPECT_TRUE(resolves_inside(root, root / "ci" / "maxcode.json"));
  EXPECT_TRUE(resolves_inside(root, root / "ci" / "missing.json"));  // not there yet: still inside
  EXPECT_FALSE(resolves_inside(root, root / "link" / "secret.json"));
  EXPECT_FALSE(resolves_inside(root, root / "ci" / "relative.json"));
  EXPECT_FALSE(resolves_inside(root, root / ".." / "elsewhere"));
  EXPECT_FALSE(resolves_inside(root, dir / "clone2"));  // a prefix of the name is not inside
  // A name too long for the file system throws no filesystem_error.
  EXPECT_NO_THROW(resolves_inside(root, root / std::string(100'000, 'a')));
}

}  // namespace
}  // namespace maxcode
