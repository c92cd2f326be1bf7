// JSON in and out of maxcode when the text came from outside.
//
// Out: strings that maxcode did not write (test and compiler output, candidate code,
// model replies, the reasons quoting them) may hold any bytes, and JSON holds only
// UTF-8; nlohmann's own dump() throws type_error.316 on the first stray byte, which
// ended whole runs with no result. dump_json() is the one way maxcode serialises JSON
// (result.json, job.json, checkpoints, trajectories, rollouts, request bodies): a byte
// that is not UTF-8 becomes U+FFFD. tests/unit/util/json_io_test.cc keeps every other
// dump() out of runner/, bot/ and cli/.
//
// In: documents that people or programs hand maxcode (configs, job documents, records)
// are read by parse_json_input(), which is nlohmann's parser with three more rules: no
// nesting deeper than max_depth (a value 1,000,000 levels deep would overflow the stack
// of whatever walks it), no key twice in one object (nlohmann keeps the last silently),
// and every error names the document and, where it can, the field and the line.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "runner/util/error.h"

namespace maxcode {

// value.dump(indent) with invalid UTF-8 replaced by U+FFFD; never throws a json exception.
template <class Json>
std::string dump_json(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// `text` with each byte that is not part of well-formed UTF-8 replaced by U+FFFD.
std::string valid_utf8(std::string_view text);
bool is_valid_utf8(std::string_view text);

// A quotation for an error message: `text` itself when short, else its first `limit`
// bytes (cut at a character boundary) and "... (N bytes)"; always valid UTF-8.
std::string excerpt(std::string_view text, std::size_t limit = 80);

class JsonInputError : public Error {
 public:
  using Error::Error;
};

struct JsonReadOptions {
  bool comments = false;        // `//` and `/* */` (the project file allows them)
  std::size_t max_depth = 512;  // objects and arrays open at once
  bool unique_keys = true;      // false: a repeated key keeps its last value (for replies
                                // of services that maxcode does not write the rules for)
};

// The document in `text`, or JsonInputError reading
//   "<label>: invalid JSON at line L, column C: <problem>"      (syntax, bad UTF-8)
//   "<label>: <field>: number out of range: 1e400 (line L, column C)"
//   "<label>: <field>: duplicate key \"k\""
//   "<label>: <field>: nested deeper than 512 levels"
// with <field> a path such as `search.knobs[2].values`.
nlohmann::json parse_json_input(std::string_view text, const std::string& label,
                                const JsonReadOptions& options = {});

// What check_json_input found.
struct JsonCheck {
  enum class Verdict { kValid, kMalformed, kTooDeep, kTooMany } verdict = Verdict::kValid;
  std::string problem;  // worded as parse_json_input's errors, with `label`; empty when valid
};

// Whether `text` is one JSON document nested at most `max_depth` deep and holding at
// most `max_values` values (scalars, arrays and objects), found without building it
// (memory: a bit per open level up to max_depth). For bodies that are stored now and
// parsed later (webhooks): 10,000,000 `[` are refused at level max_depth + 1 instead of
// growing a parser's stack by hundreds of MB, and a flat array of 12,000,000 numbers
// (24 MB, which built takes ~470 MB) at its max_values + 1st element.
JsonCheck check_json_input(std::string_view text, const std::string& label, std::size_t max_depth = 512,
                           std::size_t max_values = SIZE_MAX);

}  // namespace maxcode
