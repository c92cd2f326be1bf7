#include "runner/util/slug.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(Slug, RefSlugsAreOneSafeComponent) {
  EXPECT_EQ(ref_slug("src/histogram.cpp"), "src-histogram-cpp");
  EXPECT_EQ(ref_slug("../.lock"), "lock");
  EXPECT_EQ(ref_slug(""), "x");
}

// The runner protocol's names for result directories and files (the service checks
// uploads by it, the worker its own): one component, never "..", never hidden.
TEST(Slug, ResultNamesCannotLeaveTheirDirectory) {
  EXPECT_TRUE(safe_result_name("histogram"));
  EXPECT_TRUE(safe_result_name("report.md"));
  EXPECT_TRUE(safe_result_name("attempt-2"));
  EXPECT_FALSE(safe_result_name(""));
  EXPECT_FALSE(safe_result_name(".."));
  EXPECT_FALSE(safe_result_name(".hidden"));
  EXPECT_FALSE(safe_result_name("../etc"));
  EXPECT_FALSE(safe_result_name("a/b"));
  EXPECT_FALSE(safe_result_name(std::string(201, 'a')));
}

}  // namespace
}  // namespace maxcode
