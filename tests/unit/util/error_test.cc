#include "runner/util/error.h"

#include <gtest/gtest.h>

namespace maxcode {
namespace {

class RemoteError : public Error {
 public:
  RemoteError(const std::string& message, int status)
      : Error(message, status >= 500 ? Retryable::kYes : Retryable::kNo), status(status) {}
  int status;
};

TEST(Error, RetryableOnlyWhenSaidSo) {
  EXPECT_FALSE(Error("bad config").retryable());
  EXPECT_TRUE(Error("server busy", Retryable::kYes).retryable());
  EXPECT_STREQ(Error("bad config").what(), "bad config");
}

// The flag and the original survive wrapping with context, twice over.
TEST(Error, WrappingKeepsTheFlagAndTheCause) {
  const RemoteError busy("HTTP 502", 502);
  const Error once("delivering job 7", busy);
  const Error twice("the deliveries worker", once);
  EXPECT_TRUE(once.retryable());
  EXPECT_TRUE(twice.retryable());
  EXPECT_STREQ(twice.what(), "the deliveries worker: delivering job 7: HTTP 502");
  const RemoteError* found = find_error<RemoteError>(twice);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->status, 502);

  const Error denied("delivering job 8", RemoteError("HTTP 404", 404));
  EXPECT_FALSE(denied.retryable());
  EXPECT_EQ(find_error<RemoteError>(denied)->status, 404);
}

// An exception from outside maxcode can be wrapped; it is never retryable.
TEST(Error, AForeignCauseIsNotRetryable) {
  const Error wrapped("reading the store", std::runtime_error("disk I/O error"));
  EXPECT_FALSE(wrapped.retryable());
  EXPECT_STREQ(wrapped.what(), "reading the store: disk I/O error");
  EXPECT_EQ(find_error<RemoteError>(wrapped), nullptr);
  EXPECT_STREQ(wrapped.cause()->what(), "disk I/O error");
  EXPECT_EQ(find_error<RemoteError>(std::runtime_error("x")), nullptr);
}

}  // namespace
}  // namespace maxcode
