// Dates of the calendar; see dates.hpp.
#include "base/dates.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

namespace ub {

namespace {

// The number written by the n digits at `at`, or -1 where they are not all digits.
int digits(std::string_view text, size_t at, size_t n) {
  if (text.size() < at + n) return -1;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

int days_in(int year, int month) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

}  // namespace

bool is_date_prefix(std::string_view text) {
  if (digits(text, 0, 4) < 0) return false;
  if (text.size() == 5 || text.size() == 6 || text.size() == 8 || text.size() == 9) return false;
  const bool month_ok = text.size() <= 4 || (text[4] == '-' && digits(text, 5, 2) >= 1 && digits(text, 5, 2) <= 12);
  if (!month_ok) return false;
  const bool day_ok = text.size() <= 7 || (text[7] == '-' && digits(text, 8, 2) >= 1 &&
                                           digits(text, 8, 2) <= days_in(digits(text, 0, 4), digits(text, 5, 2)));
  if (!day_ok) return false;
  if (text.size() <= 10) return true;
  // A time after the date: hours, and minutes and seconds where given, within the day.
  if (text[10] != 'T' && text[10] != ' ') return false;
  const size_t end = text.back() == 'Z' ? text.size() - 1 : text.size();  // UTC, as the runs are dated
  const int limits[] = {23, 59, 59};
  for (size_t i = 0, at = 11; at < end; ++i, at += 3) {
    if (i == 3 || at + 2 > end || digits(text, at, 2) < 0 || digits(text, at, 2) > limits[i]) return false;
    if (at + 2 < end && text[at + 2] != ':') return false;
  }
  return true;
}

bool is_timestamp(std::string_view text) {
  if (text.size() < 19 || !is_date_prefix(text.substr(0, 19))) return false;
  const int year = digits(text, 0, 4);
  if (year < 2000 || year > 2100) return false;
  size_t at = 19;
  if (at < text.size() && text[at] == '.') {  // fractional seconds
    const size_t first = ++at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    if (at == first) return false;
  }
  const std::string_view zone = text.substr(at);
  if (zone.empty() || zone == "Z") return true;
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':' && digits(zone, 1, 2) >= 0 &&
         digits(zone, 1, 2) <= 14 && digits(zone, 4, 2) >= 0 && digits(zone, 4, 2) <= 59;
}

namespace {

// Days since 1970-01-01 of a date of the proleptic Gregorian calendar, and back (H. Hinnant's
// civil-date algorithms).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t z, int64_t& y, int64_t& m, int64_t& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = yoe + era * 400 + (m <= 2);
}

}  // namespace

std::string utc_timestamp(std::string_view text) {
  if (!is_timestamp(text)) return std::string(text);
  int64_t seconds = days_from_civil(digits(text, 0, 4), digits(text, 5, 2), digits(text, 8, 2)) * 86400 +
                    digits(text, 11, 2) * 3600 + digits(text, 14, 2) * 60 + digits(text, 17, 2);
  size_t at = 19;
  if (at < text.size() && text[at] == '.') {
    ++at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
  }
  const std::string_view zone = text.substr(at);
  if (zone.size() == 6) {  // local time = UTC + offset
    const int64_t offset = digits(zone, 1, 2) * 3600 + digits(zone, 4, 2) * 60;
    seconds -= zone[0] == '+' ? offset : -offset;
  }
  const int64_t days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
  const int64_t in_day = seconds - days * 86400;
  int64_t y = 0, m = 0, d = 0;
  civil_from_days(days, y, m, d);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", y, m, d, in_day / 3600, in_day % 3600 / 60, in_day % 60);
}

}  // namespace ub
