#include "runner/util/html_escape.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

TEST(HtmlEscape, EscapesMarkupAndBothQuotes) {
  EXPECT_EQ(html_escape("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
  // Attribute values are quoted either way in maxcode's pages (the dashboard uses ').
  EXPECT_EQ(html_escape("x=\"1\" y='2'"), "x=&quot;1&quot; y=&#39;2&#39;");
  EXPECT_EQ(html_escape("<script>alert('x')</script>"), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
}

TEST(HtmlEscape, LeavesOtherTextAlone) {
  EXPECT_EQ(html_escape(""), "");
  EXPECT_EQ(html_escape("histogram 1.75x — ünïcode"), "histogram 1.75x — ünïcode");
}

}  // namespace
}  // namespace maxcode
