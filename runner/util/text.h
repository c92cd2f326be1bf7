// Small text helpers that every stage needs and none owns.
#pragma once

#include <string_view>

namespace maxcode {

// The characters std::isspace calls blank in the C locale.
inline constexpr std::string_view kBlanks = " \t\n\v\f\r";

// Around a line of a tool's output: spaces, tabs and the \r that CRLF output leaves.
inline constexpr std::string_view kLineBlanks = " \t\r";

// `text` without leading and trailing characters from `blanks`. A view into `text`:
// keep the text alive as long as the view (copy it into a std::string otherwise).
std::string_view trim(std::string_view text, std::string_view blanks = kBlanks);

}  // namespace maxcode
