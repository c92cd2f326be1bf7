#include "runner/workspace/locate.h"

#include <set>

#include "runner/util/files.h"
#include "runner/util/glob.h"

namespace maxcode {

namespace fs = std::filesystem;

bool is_source_file(const std::string& path) {
  static const std::set<std::string> extensions{".c",  ".cc",  ".cpp", ".cxx", ".h", ".hh",
                                                ".hpp", ".hxx", ".cu",  ".cuh", ".inl"};
  return extensions.count(fs::path(path).extension().string()) > 0;
}

namespace {

std::string collapse(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::vector<Located> locate_definitions(const fs::path& root, const ScopeConfig& scope, const std::string& function,
                                        const std::string& signature) {
  std::vector<Located> found;
  for (const std::string& path : list_files(root)) {
    if (!is_source_file(path) || !in_scope(path, scope.include, scope.exclude)) continue;
    const std::string text = read_text(root / path);
    if (text.find(function.substr(function.rfind(':') == std::string::npos ? 0 : function.rfind(':') + 1)) ==
        std::string::npos)
      continue;  // cheap filter before scanning
    for (const Extent& extent : find_definitions(text, function)) {
      if (!signature.empty() && extent.signature.find(collapse(signature)) == std::string::npos) continue;
      found.push_back({Target{path, function, extent.signature, extent.line_begin, extent.line_end}, extent});
    }
  }
  return found;
}

Located locate_target(const fs::path& root, const ScopeConfig& scope, const std::string& function,
                      const std::string& signature, const std::string& file) {
  std::vector<Located> found = locate_definitions(root, scope, function, signature);
  if (found.size() > 1 && !file.empty()) {
    std::vector<Located> in_file;
    for (const Located& l : found)
      if (l.target.file == file) in_file.push_back(l);
    if (in_file.size() == 1) return in_file.front();
  }
  if (found.empty())
    throw SourceError("no definition of '" + function + "'" +
                      (signature.empty() ? "" : " with signature '" + signature + "'") +
                      " in the source files in scope (include: " +
                      [&] {
                        std::string s;
                        for (const auto& g : scope.include) s += (s.empty() ? "" : ", ") + g;
                        return s;
                      }() +
                      ")");
  if (found.size() > 1) {
    std::string list;
    for (const Located& l : found)
      list += "\n  " + l.target.file + ":" + std::to_string(l.target.line_begin) + ": " + l.target.signature;
    throw SourceError("'" + function + "' is ambiguous; it is defined " + std::to_string(found.size()) +
                      " times:" + list +
                      "\nname one with targets.signature in the config or --signature" +
                      (file.empty() ? "" : " (the profile's file, " + file + ", does not pick one)"));
  }
  return found.front();
}

}  // namespace maxcode
