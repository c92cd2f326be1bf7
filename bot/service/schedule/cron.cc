#include "bot/service/schedule/cron.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <sstream>
#include <vector>

namespace maxcode::bot::service {

namespace {

const char* kFieldNames[] = {"minute", "hour", "day-of-month", "month", "day-of-week"};
const char* kMonths[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
const char* kDays[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// One value of field `f`: a number or (months, weekdays) a name.
int value_of(const std::string& text, int f, int lo, int hi, const std::string& expression) {
  auto fail = [&](const std::string& why) {
    throw CronError("cron '" + expression + "': " + kFieldNames[f] + " field: " + why);
  };
  if (text.empty()) fail("empty value");
  int v = -1;
  if (std::all_of(text.begin(), text.end(), ::isdigit)) {
    if (text.size() > 3) fail("'" + text + "' is out of range " + std::to_string(lo) + "-" + std::to_string(hi));
    v = std::stoi(text);
  } else if (f == 3 || f == 4) {
    const std::string u = upper(text);
    const char** names = f == 3 ? kMonths : kDays;
    const int count = f == 3 ? 12 : 7;
    for (int i = 0; i < count; ++i)
      if (u == names[i]) v = f == 3 ? i + 1 : i;
    if (v < 0) fail("'" + text + "' is not a " + (f == 3 ? "month (JAN-DEC)" : "day (SUN-SAT)"));
  } else {
    fail("'" + text + "' is not a number");
  }
  if (f == 4 && v == 7) v = 0;  // Sunday
  if (v < lo || v > hi) fail(std::to_string(v) + " is out of range " + std::to_string(lo) + "-" + std::to_string(hi));
  return v;
}

// Sets the bits of field `f` from its text; returns false when the field is `*`.
template <std::size_t N>
bool parse_field(const std::string& text, int f, int lo, int hi, std::bitset<N>& bits, const std::string& expression) {
  std::stringstream in(text);
  bool restricted = true;
  for (std::string part; std::getline(in, part, ',');) {
    int step = 1;
    const auto slash = part.find('/');
    if (slash != std::string::npos) {
      const std::string s = part.substr(slash + 1);
      if (s.empty() || s.size() > 3 || !std::all_of(s.begin(), s.end(), ::isdigit) || std::stoi(s) == 0)
        throw CronError("cron '" + expression + "': " + kFieldNames[f] + " field: step '" + s + "' must be a positive number");
      step = std::stoi(s);
      part = part.substr(0, slash);
    }
    int from, to;
    if (part == "*") {
      from = lo;
      to = f == 4 ? 6 : hi;
      if (step == 1 && text == "*") restricted = false;
    } else if (const auto dash = part.find('-'); dash != std::string::npos) {
      from = value_of(part.substr(0, dash), f, lo, hi, expression);
      to = value_of(part.substr(dash + 1), f, lo, hi, expression);
      if (f == 4 && to == 0 && part.substr(dash + 1) == "7") to = 6, bits.set(0);  // "5-7": Fri..Sun
      if (to < from)
        throw CronError("cron '" + expression + "': " + kFieldNames[f] + " field: range '" + part + "' runs backwards");
    } else {
      from = value_of(part, f, lo, hi, expression);
      to = slash == std::string::npos ? from : (f == 4 ? 6 : hi);
    }
    for (int v = from; v <= to; v += step) bits.set(static_cast<std::size_t>(v));
  }
  if (bits.none()) throw CronError("cron '" + expression + "': " + kFieldNames[f] + " field: empty");
  return restricted;
}

}  // namespace

CronExpression CronExpression::parse(const std::string& text) {
  std::string t = text;
  const std::string u = upper(text);
  if (u == "@HOURLY") t = "0 * * * *";
  else if (u == "@DAILY" || u == "@NIGHTLY" || u == "@MIDNIGHT") t = "0 0 * * *";
  else if (u == "@WEEKLY") t = "0 0 * * 0";
  else if (u == "@MONTHLY") t = "0 0 1 * *";
  else if (u == "@YEARLY" || u == "@ANNUALLY") t = "0 0 1 1 *";
  else if (!text.empty() && text[0] == '@') throw CronError("cron '" + text + "': unknown macro");
  std::istringstream in(t);
  std::vector<std::string> fields;
  for (std::string w; in >> w;) fields.push_back(w);
  if (fields.size() != 5)
    throw CronError("cron '" + text + "': expected 5 fields (minute hour day-of-month month day-of-week), got " +
                    std::to_string(fields.size()));
  CronExpression c;
  parse_field(fields[0], 0, 0, 59, c.minutes_, text);
  parse_field(fields[1], 1, 0, 23, c.hours_, text);
  c.days_restricted_ = parse_field(fields[2], 2, 1, 31, c.days_, text);
  parse_field(fields[3], 3, 1, 12, c.months_, text);
  c.weekdays_restricted_ = parse_field(fields[4], 4, 0, 7, c.weekdays_, text);
  return c;
}

bool CronExpression::matches_local(int minute, int hour, int day, int month, int weekday) const {
  if (!minutes_[minute] || !hours_[hour] || !months_[month]) return false;
  const bool d = days_[day], w = weekdays_[weekday];
  if (days_restricted_ && weekdays_restricted_) return d || w;
  return d && w;
}

std::int64_t CronExpression::next_after(std::int64_t utc_seconds, const TimeZone& zone) const {
  std::int64_t t = (utc_seconds / 60 + 1) * 60;
  const std::int64_t limit = t + 4LL * 366 * 86400;
  while (t < limit) {
    const std::time_t local = static_cast<std::time_t>(t + zone.offset_at(t));
    std::tm tm{};
    gmtime_r(&local, &tm);
    const bool day_ok = months_[tm.tm_mon + 1] &&
                        ((days_restricted_ && weekdays_restricted_) ? (days_[tm.tm_mday] || weekdays_[tm.tm_wday])
                                                                    : (days_[tm.tm_mday] && weekdays_[tm.tm_wday]));
    if (!day_ok) {  // on to the next local midnight
      t += (24 * 60 - (tm.tm_hour * 60 + tm.tm_min)) * 60;
      continue;
    }
    if (!hours_[tm.tm_hour]) {  // on to the next local hour
      t += (60 - tm.tm_min) * 60;
      continue;
    }
    if (minutes_[tm.tm_min]) return t;
    t += 60;
  }
  return -1;
}

}  // namespace maxcode::bot::service
