// The machine-readable part of a maxcode PR body: `<!-- maxcode: {json} -->`, invisible
// on GitHub. A later run reads it back to recognise its own PR and to tell whether the
// target function changed since (target_hash), e.g. after a maintainer closed the PR.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace maxcode::bot {

// The comment line. '<' and '>' inside the JSON are written as \u003c and \u003e, so no
// value (a signature with `operator->`, say) can end the comment early.
std::string render_metadata(const nlohmann::json& metadata);

// The metadata of a body, or nullopt when there is none or it is not JSON. Takes the
// last marker: sanitized text above it cannot hold one (its '<' are escaped).
std::optional<nlohmann::json> parse_metadata(const std::string& body);

// SHA-256 of a function's text, with line endings and trailing blanks normalised, so an
// editor's whitespace does not count as a change of the code.
std::string code_hash(const std::string& code);

// Lines [line_begin, line_end] (1-based, inclusive) of `text`; empty when out of range.
std::string lines_of(const std::string& text, std::size_t line_begin, std::size_t line_end);

}  // namespace maxcode::bot
