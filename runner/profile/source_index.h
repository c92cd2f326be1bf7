// Finding a profiled function's definition in the repository's sources, for code
// whose binary carries no line information (built without -g, stripped, a CUDA
// kernel known only by name) — the same token scanner `maxcode optimize` uses to
// locate its target (runner/workspace/source_extent.h).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace maxcode {

struct SourceLocation {
  std::string file;  // relative to the root
  int line = 0;
};

class SourceIndex {
 public:
  // C, C++ and CUDA files under `root` (not under build/ or hidden folders).
  explicit SourceIndex(const std::filesystem::path& root);
  // The one definition of `function` (qualified or not); nullopt when there is none
  // or several that the name alone cannot tell apart.
  std::optional<SourceLocation> find(const std::string& function);
  // The files indexed (relative to the root) and their text, read once (empty when
  // unreadable).
  const std::vector<std::string>& files() const { return files_; }
  const std::string& text(const std::string& file);

 private:
  std::filesystem::path root_;
  std::vector<std::string> files_;
  std::map<std::string, std::string> text_;  // loaded lazily
  std::map<std::string, std::optional<SourceLocation>> found_;
};

}  // namespace maxcode
