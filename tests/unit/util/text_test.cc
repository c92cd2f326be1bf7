#include "runner/util/text.h"

#include <string>

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(Trim, DropsBlanksAtBothEnds) {
  EXPECT_EQ(trim("  a b\t\r\n"), "a b");
  EXPECT_EQ(trim("\v\fx\f\v"), "x");
  EXPECT_EQ(trim("plain"), "plain");
}

TEST(Trim, AllBlankOrEmptyIsEmpty) {
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \t\r\n"), "");
}

TEST(Trim, OnlyTheGivenBlanks) {
  EXPECT_EQ(trim(" 5\r\n", " \t"), "5\r\n");
  EXPECT_EQ(trim("\t x \f", " \t\r"), "x \f");
}

TEST(Trim, ViewsIntoTheText) {
  const std::string text = "  kept  ";
  const std::string_view trimmed = trim(text);
  EXPECT_EQ(trimmed.data(), text.data() + 2);
  EXPECT_EQ(trimmed.size(), 4u);
}

}  // namespace
}  // namespace maxcode
