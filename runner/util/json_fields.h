// Wording shared by the strict JSON readers (.maxcode.json, its llm section): how a
// value's type reads in a sentence, and what to suggest for a misspelt field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace maxcode {

// "a string", "an object", "null".
std::string describe_type(const nlohmann::json& value);

// "a, b, c".
std::string join_words(const std::vector<std::string_view>& words);

// "did you mean 'command'?" for a field within two edits of a known one, else
// "known fields: ...": typos are the common case of an unknown field.
std::string suggest_field(std::string_view key, const std::vector<std::string_view>& known);

}  // namespace maxcode
