// Cron expressions (five fields: minute hour day-of-month month day-of-week) evaluated
// in a time zone. Fields take `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`,
// lists `a,b`, month and day names (JAN, MON), 7 for Sunday; @hourly, @daily (and
// @nightly, @midnight), @weekly, @monthly, @yearly. As in Vixie cron, when both
// day-of-month and day-of-week are restricted, a day matching either counts.
// A local time that a daylight-saving change skips does not fire.
#pragma once

#include <bitset>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "bot/service/schedule/time_zone.h"
#include "runner/util/error.h"

namespace maxcode::bot::service {

class CronError : public Error {
 public:
  using Error::Error;
};

class CronExpression {
 public:
  // Throws CronError saying which field is wrong and why.
  static CronExpression parse(const std::string& text);
  // The first minute strictly after `utc_seconds` whose local time in `zone` matches;
  // -1 when none within the next four years (e.g. "0 0 30 2 *").
  std::int64_t next_after(std::int64_t utc_seconds, const TimeZone& zone) const;
  bool matches_local(int minute, int hour, int day, int month, int weekday) const;

 private:
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;    // 1..31
  std::bitset<13> months_;  // 1..12
  std::bitset<7> weekdays_; // 0 = Sunday
  bool days_restricted_ = false, weekdays_restricted_ = false;
};

}  // namespace maxcode::bot::service
