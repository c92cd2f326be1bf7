// Target: the one function a search tries to make faster, and where it lives.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace maxcode {

struct Target {
  std::string file;        // relative to the repository root, '/' separators
  std::string function;    // as the user named it
  std::string signature;   // the definition's declaration text
  std::size_t line_begin = 0;
  std::size_t line_end = 0;
};

inline nlohmann::json to_json(const Target& t) {
  return {{"file", t.file},           {"function", t.function}, {"signature", t.signature},
          {"line_begin", t.line_begin}, {"line_end", t.line_end}};
}

}  // namespace maxcode
