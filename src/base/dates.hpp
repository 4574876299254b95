// Dates as runs are dated (ISO 8601, UTC: 2026-11-30T08:00:00Z): whether a text is one of the
// calendar, written once for the history's filters (--since 2026-13-45 is a typing error, not a
// filter that matches nothing) and for the dates it stores (a run dated "not a date" or
// 2026-02-30 would sort among the real ones).
#pragma once

#include <string>
#include <string_view>

namespace ub {

// A date or its beginning: 2026, 2026-11, 2026-11-30, then a time after 'T' or ' ' (hours,
// minutes, seconds, each within the day) and an optional 'Z'. February's 29th only in a leap year.
bool is_date_prefix(std::string_view text);

// A whole timestamp: YYYY-MM-DD, 'T' or ' ', HH:MM:SS, optional fractional seconds, then nothing,
// 'Z' or an offset of at most 14 hours (+05:30); the year 2000 to 2100 (the runs of any GPU).
bool is_timestamp(std::string_view text);

// A timestamp (is_timestamp) as the instant in UTC, "YYYY-MM-DDTHH:MM:SSZ" (fractional seconds
// dropped; no zone is taken as UTC): dates are stored and compared so, since 10:00+14:00 is
// before 21:00Z of the day before, whatever their texts' order.
std::string utc_timestamp(std::string_view text);

}  // namespace ub
