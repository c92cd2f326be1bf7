// Cron expressions and time zones: the fields, the errors, and the next time in UTC and
// across Europe/Berlin's daylight-saving changes (read from the system tz database).
#include "bot/service/schedule/cron.h"

#include <gtest/gtest.h>

#include <ctime>

namespace maxcode::bot::service {
namespace {

std::int64_t utc(int y, int mo, int d, int h, int mi) {
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  return timegm(&tm);
}

TEST(Cron, NextTimeInUtc) {
  const TimeZone z = TimeZone::utc();
  EXPECT_EQ(CronExpression::parse("0 3 * * *").next_after(utc(2026, 11, 23, 18, 0), z), utc(2026, 11, 24, 3, 0));
  EXPECT_EQ(CronExpression::parse("0 3 * * *").next_after(utc(2026, 11, 23, 2, 59), z), utc(2026, 11, 23, 3, 0));
  // Strictly after: at 03:00 itself the next is tomorrow's.
  EXPECT_EQ(CronExpression::parse("0 3 * * *").next_after(utc(2026, 11, 23, 3, 0), z), utc(2026, 11, 24, 3, 0));
  EXPECT_EQ(CronExpression::parse("*/15 * * * *").next_after(utc(2026, 11, 23, 18, 7), z), utc(2026, 11, 23, 18, 15));
  EXPECT_EQ(CronExpression::parse("5-10/5 8 * * *").next_after(utc(2026, 11, 23, 8, 6), z), utc(2026, 11, 23, 8, 10));
  EXPECT_EQ(CronExpression::parse("@monthly").next_after(utc(2026, 11, 23, 0, 0), z), utc(2026, 12, 1, 0, 0));
  EXPECT_EQ(CronExpression::parse("0 0 1 jan *").next_after(utc(2026, 11, 23, 0, 0), z), utc(2027, 1, 1, 0, 0));
  // 2026-11-01 is a Sunday. Day-of-month and day-of-week both restricted: either day.
  EXPECT_EQ(CronExpression::parse("0 0 13 * FRI").next_after(utc(2026, 11, 1, 0, 0), z), utc(2026, 11, 6, 0, 0));
  EXPECT_EQ(CronExpression::parse("0 0 13 * *").next_after(utc(2026, 11, 1, 0, 0), z), utc(2026, 11, 13, 0, 0));
  EXPECT_EQ(CronExpression::parse("0 12 * * 7").next_after(utc(2026, 11, 2, 0, 0), z), utc(2026, 11, 8, 12, 0));
  EXPECT_EQ(CronExpression::parse("0 12 * * 5-7").next_after(utc(2026, 11, 2, 0, 0), z), utc(2026, 11, 6, 12, 0));
  EXPECT_EQ(CronExpression::parse("0 0 30 2 *").next_after(utc(2026, 11, 1, 0, 0), z), -1);  // never
}

TEST(Cron, NextTimeInAZoneWithDaylightSaving) {
  TimeZone berlin;
  try {
    berlin = TimeZone::load("Europe/Berlin");
  } catch (const TimeZoneError& e) {
    GTEST_SKIP() << e.what();  // no tz database on this machine
  }
  const auto nightly = CronExpression::parse("0 3 * * *");
  // Winter: 03:00 CET is 02:00 UTC.
  EXPECT_EQ(nightly.next_after(utc(2026, 11, 23, 12, 0), berlin), utc(2026, 11, 24, 2, 0));
  // 2026-03-29 the clocks go forward at 01:00 UTC: 03:00 CEST is 01:00 UTC.
  EXPECT_EQ(nightly.next_after(utc(2026, 3, 28, 12, 0), berlin), utc(2026, 3, 29, 1, 0));
  // 02:30 does not exist in Berlin that night: the next one is the day after.
  EXPECT_EQ(CronExpression::parse("30 2 * * *").next_after(utc(2026, 3, 28, 12, 0), berlin), utc(2026, 3, 30, 0, 30));
  EXPECT_EQ(berlin.offset_at(utc(2026, 7, 1, 0, 0)), 7200);
  EXPECT_EQ(berlin.offset_at(utc(2026, 1, 1, 0, 0)), 3600);
}

TEST(Cron, ErrorsNameTheField) {
  auto expect_error = [](const std::string& text, const std::string& part) {
    try {
      CronExpression::parse(text);
      ADD_FAILURE() << text << " parsed";
    } catch (const CronError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error("0 3 * *", "expected 5 fields");
  expect_error("60 3 * * *", "minute field: 60 is out of range 0-59");
  expect_error("0 24 * * *", "hour field: 24 is out of range 0-23");
  expect_error("0 3 0 * *", "day-of-month field: 0 is out of range 1-31");
  expect_error("0 3 * FOO *", "month field: 'FOO' is not a month");
  expect_error("0 3 * * 8", "day-of-week field: 8 is out of range");
  expect_error("*/0 * * * *", "step '0' must be a positive number");
  expect_error("10-5 * * * *", "runs backwards");
  expect_error("@sometimes", "unknown macro");
  EXPECT_THROW(TimeZone::load("Mars/Olympus"), TimeZoneError);
  EXPECT_THROW(TimeZone::load("../../etc/passwd"), TimeZoneError);
}

}  // namespace
}  // namespace maxcode::bot::service
