#include "runner/profile/source_index.h"

#include <algorithm>
#include <array>

#include "runner/util/files.h"
#include "runner/workspace/source_extent.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

bool is_source(const std::string& path) {
  static constexpr std::array<std::string_view, 11> kExtensions = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh",
                                                                   ".hpp", ".hxx", ".cu", ".cuh", ".inl"};
  const std::string ext = fs::path(path).extension().string();
  return std::find(kExtensions.begin(), kExtensions.end(), ext) != kExtensions.end();
}

bool skipped_folder(const std::string& path) {
  // Build trees hold copies and generated code; hidden folders hold tool state.
  for (std::size_t begin = 0; begin < path.size();) {
    std::size_t end = path.find('/', begin);
    if (end == std::string::npos) break;
    const std::string part = path.substr(begin, end - begin);
    if (part == "build" || part.rfind("build-", 0) == 0 || part.rfind("build_", 0) == 0 ||
        part.rfind("cmake-build", 0) == 0 || part == "CMakeFiles" || (!part.empty() && part[0] == '.'))
      return true;
    begin = end + 1;
  }
  return false;
}

}  // namespace

SourceIndex::SourceIndex(const fs::path& root) : root_(root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return;
  for (const auto& path : list_files(root))
    if (is_source(path) && !skipped_folder(path)) files_.push_back(path);
}

std::optional<SourceLocation> SourceIndex::find(const std::string& function) {
  if (function.empty()) return std::nullopt;
  if (auto it = found_.find(function); it != found_.end()) return it->second;
  // The unqualified name must appear in the text: a cheap filter before scanning.
  const std::string last = function.substr(function.rfind("::") == std::string::npos ? 0 : function.rfind("::") + 2);
  std::optional<SourceLocation> result;
  int definitions = 0;
  for (const auto& file : files_) {
    const std::string& content = text(file);
    if (content.find(last) == std::string::npos) continue;
    for (const Extent& extent : find_definitions(content, function)) {
      ++definitions;
      result = SourceLocation{file, static_cast<int>(extent.line_begin)};
    }
  }
  if (definitions != 1) result.reset();
  found_[function] = result;
  return result;
}

const std::string& SourceIndex::text(const std::string& file) {
  auto [it, fresh] = text_.try_emplace(file);
  if (fresh) {
    try {
      it->second = read_text(root_ / file);
    } catch (const std::exception&) {
      it->second.clear();
    }
  }
  return it->second;
}

}  // namespace maxcode
