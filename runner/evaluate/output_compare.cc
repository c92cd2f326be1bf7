// Token-by-token comparison of a candidate's output with the baseline's.
//
// Each token is classified once:
//   integer  optional sign and decimal digits only; compared exactly, by value
//            ("+007" equals "7"), on the digit strings themselves, so integers wider
//            than 64 bits can neither overflow nor round into equality;
//   float    anything else strtod consumes entirely (1e-3, -0.5, inf, -inf, nan, NaN);
//            compared within |a - b| <= atol + rtol * max(|a|, |b|), NaN only against
//            NaN, infinity only against the same infinity. An integer against a float
//            is compared by the float rule;
//   text     everything else ("1.5f", "0x1f", "done:"), compared exactly.
// Hexadecimal is text even though strtod reads it: programs print addresses and bit
// patterns in hex, and those must match exactly, not to within a tolerance.
#include "runner/evaluate/output_compare.h"
#include "runner/util/format.h"

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace maxcode {
namespace {

struct Token {
  std::string_view text;
  std::size_t line = 0;  // 1-based
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::vector<Token> tokenize(std::string_view output) {
  std::vector<Token> tokens;
  std::size_t line = 1;
  std::size_t i = 0;
  while (i < output.size()) {
    if (is_space(output[i])) {
      if (output[i] == '\n') ++line;
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < output.size() && !is_space(output[i])) ++i;
    tokens.push_back({output.substr(start, i - start), line});
  }
  return tokens;
}

enum class Kind { kInteger, kFloat, kText };

struct Value {
  Kind kind = Kind::kText;
  bool negative = false;    // integer: sign, false for zero
  std::string_view digits;  // integer: digits without leading zeros, empty for zero
  double number = 0;        // float only
};

std::optional<Value> parse_integer(std::string_view token) {
  std::size_t i = 0;
  const bool negative = !token.empty() && token[0] == '-';
  if (!token.empty() && (token[0] == '-' || token[0] == '+')) i = 1;
  if (i == token.size()) return std::nullopt;
  for (std::size_t j = i; j < token.size(); ++j) {
    if (token[j] < '0' || token[j] > '9') return std::nullopt;
  }
  while (i < token.size() && token[i] == '0') ++i;
  Value v;
  v.kind = Kind::kInteger;
  v.digits = token.substr(i);
  v.negative = negative && !v.digits.empty();  // "-0" is zero
  return v;
}

bool looks_hexadecimal(std::string_view token) {
  if (!token.empty() && (token[0] == '-' || token[0] == '+')) token.remove_prefix(1);
  return token.size() >= 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X');
}

// strtod needs a terminated string; `buffer` is reused so that long outputs do not
// allocate per token. Programs under test print in the "C" locale unless they change
// it, and so does this process, so the decimal point is '.' on both sides.
std::optional<double> parse_double(std::string_view token, std::string& buffer) {
  buffer.assign(token);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(buffer.c_str(), &end);
  if (end != buffer.c_str() + buffer.size()) return std::nullopt;
  // A finite literal too large for a double ("1e999") would read as infinity and then
  // equal every other such literal; comparing it as text is the honest choice.
  if (errno == ERANGE && std::isinf(value)) return std::nullopt;
  return value;
}

Value classify(std::string_view token, std::string& buffer) {
  if (std::optional<Value> integer = parse_integer(token)) return *integer;
  Value v;
  if (looks_hexadecimal(token)) return v;
  if (std::optional<double> number = parse_double(token, buffer)) {
    v.kind = Kind::kFloat;
    v.number = *number;
  }
  return v;
}

// Why two numbers differ under `tolerance`, or nothing when they match.
std::optional<std::string> compare_numbers(double expected, double actual,
                                           const Tolerance& tolerance, double& max_relative) {
  if (std::isnan(expected) || std::isnan(actual)) {
    if (std::isnan(expected) && std::isnan(actual)) return std::nullopt;
    return std::isnan(expected) ? "NaN expected" : "NaN where a number was expected";
  }
  if (std::isinf(expected) || std::isinf(actual)) {
    if (expected == actual) return std::nullopt;
    if (std::isinf(expected) && std::isinf(actual)) return "infinity of the wrong sign";
    return std::isinf(expected) ? "infinity expected"
                                : "infinity where a finite number was expected";
  }
  const double error = std::fabs(expected - actual);
  const double scale = std::max(std::fabs(expected), std::fabs(actual));
  if (scale > 0) max_relative = std::max(max_relative, error / scale);
  if (error <= tolerance.atol + tolerance.rtol * scale) return std::nullopt;
  if (tolerance.atol == 0) {
    return format_numbers("relative error %.2e exceeds rtol %g", error / scale, tolerance.rtol);
  }
  return format_numbers("absolute error %.2e exceeds atol %g + rtol %g * %.2e", error, tolerance.atol,
                tolerance.rtol, scale);
}

// A numeric token's value as a double; integers are read only when compared with a
// float. One beyond double's range (over 308 digits) becomes the largest finite
// double: still finite, so never equal to an infinity.
double as_double(const Value& value, std::string_view token, std::string& buffer) {
  if (value.kind == Kind::kFloat) return value.number;
  const double limit = value.negative ? -DBL_MAX : DBL_MAX;
  return parse_double(token, buffer).value_or(limit);
}

// Why two tokens differ, or nothing when they match.
std::optional<std::string> compare_tokens(std::string_view expected, std::string_view actual,
                                          const Tolerance& tolerance, std::string& buffer,
                                          double& max_relative) {
  if (expected == actual) return std::nullopt;  // the common case, and always a match
  const Value e = classify(expected, buffer);
  const Value a = classify(actual, buffer);
  if (e.kind == Kind::kText || a.kind == Kind::kText) return "text differs";
  if (e.kind == Kind::kInteger && a.kind == Kind::kInteger) {
    if (e.negative == a.negative && e.digits == a.digits) return std::nullopt;
    return "integer differs";
  }
  return compare_numbers(as_double(e, expected, buffer), as_double(a, actual, buffer),
                         tolerance, max_relative);
}

// The entry for outputs of different lengths: placed where the shorter one ends.
Mismatch length_mismatch(const std::vector<Token>& expected, const std::vector<Token>& actual) {
  Mismatch m;
  m.token = std::min(expected.size(), actual.size());
  if (m.token < expected.size()) {
    m.line = expected[m.token].line;
    m.expected = expected[m.token].text;
  } else {
    m.line = expected.empty() ? 1 : expected.back().line;
  }
  if (m.token < actual.size()) m.actual = actual[m.token].text;
  m.why = "output has " + std::to_string(actual.size()) + " tokens, expected " +
          std::to_string(expected.size());
  return m;
}

// Long tokens (a line of hex, a path) would swamp the paragraph.
std::string shorten(const std::string& token) {
  constexpr std::size_t kMax = 40;
  if (token.empty()) return "end of output";
  if (token.size() <= kMax) return token;
  return token.substr(0, kMax) + "...";
}

bool is_number(const Value& v) { return v.kind != Kind::kText; }

// A number inside punctuation, as benchmarks print them: "(12.5", "3,", "[7]", "45%".
struct Affixed {
  std::string_view prefix, core, suffix;
};

Affixed split_affixes(std::string_view token) {
  constexpr std::string_view kOpen = "([{<\"'", kClose = ")]}>,;:%\"'";
  std::size_t begin = 0, end = token.size();
  while (begin < end && kOpen.find(token[begin]) != std::string_view::npos) ++begin;
  while (end > begin && kClose.find(token[end - 1]) != std::string_view::npos) --end;
  return {token.substr(0, begin), token.substr(begin, end - begin), token.substr(end)};
}

// Whether a token is a number for the varying-field mask: its core, without the
// punctuation around it.
bool number_core(std::string_view token, std::string& buffer) {
  const std::string_view core = split_affixes(token).core;
  return !core.empty() && is_number(classify(core, buffer));
}

// Each token's place for the varying-field mask: its line's shape and its slot among
// that line's numbers (npos for text tokens).
struct Place {
  std::size_t line_index = 0;  // into `shapes`
  std::size_t slot = std::string::npos;
};

struct Shapes {
  std::vector<std::string> shapes;  // one per line holding tokens, in order
  std::vector<Place> places;        // one per token
};

Shapes line_shapes(const std::vector<Token>& tokens) {
  Shapes out;
  std::string buffer;
  std::size_t line = 0, slot = 0;
  for (const Token& t : tokens) {
    if (out.shapes.empty() || t.line != line) {
      out.shapes.emplace_back();
      line = t.line;
      slot = 0;
    }
    std::string& shape = out.shapes.back();
    if (!shape.empty()) shape += ' ';
    Place place{out.shapes.size() - 1, std::string::npos};
    if (number_core(t.text, buffer)) {
      const Affixed a = split_affixes(t.text);
      shape.append(a.prefix).append("#").append(a.suffix);
      place.slot = slot++;
    } else {
      shape += t.text;
    }
    out.places.push_back(place);
  }
  return out;
}

bool masked(const Tolerance& tolerance, const Shapes& shapes, std::size_t token) {
  const Place& place = shapes.places[token];
  if (place.slot == std::string::npos) return false;
  for (const VaryingField& f : *tolerance.varying)
    if (f.slot == place.slot && f.line_shape == shapes.shapes[place.line_index]) return true;
  return false;
}

}  // namespace

std::optional<std::vector<VaryingField>> find_varying_fields(std::string_view first, std::string_view second,
                                                             const Tolerance& tolerance) {
  const std::vector<Token> a = tokenize(first);
  const std::vector<Token> b = tokenize(second);
  if (a.size() != b.size()) return std::nullopt;
  const Shapes sa = line_shapes(a);
  const Shapes sb = line_shapes(b);
  if (sa.shapes != sb.shapes) return std::nullopt;
  std::vector<VaryingField> fields;
  std::string buffer;
  double ignored = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (sa.places[i].line_index != sb.places[i].line_index) return std::nullopt;
    if (!compare_tokens(a[i].text, b[i].text, tolerance, buffer, ignored)) continue;
    if (sa.places[i].slot == std::string::npos) return std::nullopt;  // text differs: not a field
    VaryingField f{sa.shapes[sa.places[i].line_index], sa.places[i].slot};
    if (std::find(fields.begin(), fields.end(), f) == fields.end()) fields.push_back(std::move(f));
  }
  return fields;
}

std::size_t compared_numbers(std::string_view output, const Tolerance& tolerance) {
  const std::vector<Token> tokens = tokenize(output);
  const bool masking = tolerance.varying && !tolerance.varying->empty();
  const Shapes shapes = masking ? line_shapes(tokens) : Shapes{};
  std::string buffer;
  std::size_t count = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (number_core(tokens[i].text, buffer) && !(masking && masked(tolerance, shapes, i))) ++count;
  return count;
}

std::string describe(const VaryingField& field) {
  std::string shape = field.line_shape;
  if (shape.size() > 60) shape = shape.substr(0, 60) + "...";
  return "'" + shape + "' (number " + std::to_string(field.slot + 1) + ")";
}

Comparison compare_outputs(std::string_view expected, std::string_view actual,
                           Tolerance tolerance, std::size_t max_reported) {
  const std::vector<Token> want = tokenize(expected);
  const std::vector<Token> got = tokenize(actual);
  Comparison result;
  result.expected_tokens = want.size();
  result.actual_tokens = got.size();

  std::string buffer;
  const bool masking = tolerance.varying && !tolerance.varying->empty();
  const Shapes shapes = masking ? line_shapes(want) : Shapes{};
  const std::size_t common = std::min(want.size(), got.size());
  for (std::size_t i = 0; i < common; ++i) {
    // A varying field only needs to be a number: a timing, not a result.
    if (masking && masked(tolerance, shapes, i) && number_core(got[i].text, buffer)) continue;
    std::optional<std::string> why = compare_tokens(want[i].text, got[i].text, tolerance, buffer,
                                                     result.max_relative_error);
    if (!why) continue;
    ++result.mismatches;
    if (result.first.size() < max_reported) {
      result.first.push_back({want[i].line, i, std::string(want[i].text),
                              std::string(got[i].text), std::move(*why)});
    }
  }
  if (want.size() != got.size()) {
    ++result.mismatches;
    if (result.first.size() < max_reported) result.first.push_back(length_mismatch(want, got));
  }
  result.equal = result.mismatches == 0;
  return result;
}

std::string Comparison::summary() const {
  if (equal) return "outputs match (" + std::to_string(expected_tokens) + " values)";
  std::string text;
  const bool lengths_differ = expected_tokens != actual_tokens;
  const std::size_t compared = std::min(expected_tokens, actual_tokens);
  const std::size_t differing = mismatches - (lengths_differ ? 1 : 0);
  if (lengths_differ) {
    text += "output has " + std::to_string(actual_tokens) + " tokens, expected " +
            std::to_string(expected_tokens) + "; ";
  }
  if (differing > 0 || !lengths_differ) {
    text += std::to_string(differing) + " of " + std::to_string(compared) + " values differ";
  } else {
    text += "the first " + std::to_string(compared) + " values match";
  }
  for (std::size_t i = 0; i < first.size(); ++i) {
    const Mismatch& m = first[i];
    text += i == 0 ? "; first at " : "; ";
    text += "line " + std::to_string(m.line) + ", token " + std::to_string(m.token) +
            ": expected " + shorten(m.expected) + ", got " + shorten(m.actual);
    // The length entry's reason is already the paragraph's first clause.
    if (!(lengths_differ && m.token == compared)) text += " (" + m.why + ")";
  }
  if (mismatches > first.size()) {
    text += "; and " + std::to_string(mismatches - first.size()) + " more";
  }
  return text;
}

bool prints_floats(std::string_view output) {
  std::string buffer;
  for (const Token& token : tokenize(output)) {
    const std::string_view core = split_affixes(token.text).core;
    if (!core.empty() && classify(core, buffer).kind == Kind::kFloat) return true;
  }
  return false;
}

bool all_numbers_zero(std::string_view output) {
  std::string buffer;
  for (const Token& token : tokenize(output)) {
    const Value v = classify(token.text, buffer);
    if (v.kind == Kind::kInteger && !v.digits.empty()) return false;
    if (v.kind == Kind::kFloat && v.number != 0) return false;  // NaN and inf are not zero
  }
  return true;
}

}  // namespace maxcode
