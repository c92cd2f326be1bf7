// Path globs for scope rules: `*` and `?` stay within one path component, `**` spans
// any number of components ("src/**" matches every file under src/).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace maxcode {

bool glob_match(std::string_view pattern, std::string_view path);

// True when `path` matches some include and no exclude.
bool in_scope(std::string_view path, const std::vector<std::string>& include,
              const std::vector<std::string>& exclude);

}  // namespace maxcode
