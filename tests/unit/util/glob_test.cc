#include "runner/util/glob.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

struct GlobCase {
  const char* pattern;
  const char* path;
  bool matches;
};

const GlobCase kCases[] = {
    // Literals.
    {"src/a.cc", "src/a.cc", true},
    {"src/a.cc", "src/b.cc", false},
    {"src/a.cc", "src/a.cc/x", false},
    {"", "", true},
    // `*` stays within one component.
    {"*.cc", "a.cc", true},
    {"*.cc", "src/a.cc", false},
    {"src/*", "src/a.cc", true},
    {"src/*", "src/x/a.cc", false},
    {"src/*.cc", "src/.cc", true},
    {"s*c/*_test.cc", "sxxc/a_test.cc", true},
    {"*a*b*", "xaybz", true},
    {"*a*b", "xaybz", false},
    {"a*", "a", true},
    // `?` is one character, never '/'.
    {"a?c", "abc", true},
    {"a?c", "ac", false},
    {"a?c", "a/c", false},
    // `**` spans any number of components, including none.
    {"src/**", "src/a.cc", true},
    {"src/**", "src/x/y.cc", true},
    {"src/**", "lib/a.cc", false},
    {"**/*.cu", "a.cu", true},
    {"**/*.cu", "k/a.cu", true},
    {"**/*.cu", "k/l/m/a.cu", true},
    {"**/*.cu", "k/a.cc", false},
    {"**", "anything/at/all", true},
    {"src/**/kernels/*.cu", "src/kernels/a.cu", true},
    {"src/**/kernels/*.cu", "src/x/y/kernels/a.cu", true},
    {"src/**/kernels/*.cu", "src/x/kernels/sub/a.cu", false},
    {"third_party/**", "third_party/lib/x.h", true},
    {"third_party/**", "src/third_party.h", false},
    // Classes, ranges, negation; an unterminated '[' is a literal.
    {"[abc].cc", "b.cc", true},
    {"[abc].cc", "d.cc", false},
    {"file[0-9].h", "file7.h", true},
    {"file[0-9].h", "filex.h", false},
    {"[!a]*", "b", true},
    {"[!a]*", "a", false},
    {"[]]", "]", true},
    {"a[", "a[", true},
    // Escapes make a special character literal.
    {"a\\*", "a*", true},
    {"a\\*", "ab", false},
};

TEST(GlobTest, Table) {
  for (const GlobCase& c : kCases) {
    EXPECT_EQ(glob_match(c.pattern, c.path), c.matches)
        << "pattern '" << c.pattern << "' path '" << c.path << "'";
  }
}

TEST(GlobTest, InScopeNeedsAnIncludeAndNoExclude) {
  std::vector<std::string> include{"src/**", "include/**"};
  std::vector<std::string> exclude{"src/generated/**", "**/*_test.cc"};
  EXPECT_TRUE(in_scope("src/a.cc", include, exclude));
  EXPECT_TRUE(in_scope("include/x/y.h", include, exclude));
  EXPECT_TRUE(in_scope("./src/a.cc", include, exclude));
  EXPECT_FALSE(in_scope("lib/a.cc", include, exclude));
  EXPECT_FALSE(in_scope("src/generated/p.cc", include, exclude));
  EXPECT_FALSE(in_scope("src/x/a_test.cc", include, exclude));
  EXPECT_FALSE(in_scope("src/a.cc", {}, {}));
  EXPECT_TRUE(in_scope("deep/down/file.cu", {"**"}, {}));
}

}  // namespace
}  // namespace maxcode
