#include "runner/profile/origin.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "runner/util/glob.h"

namespace maxcode {

namespace fs = std::filesystem;

namespace {

fs::path canonical_form(const fs::path& p) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(p, ec);
  return (ec ? fs::absolute(p) : resolved).lexically_normal();
}

// Folders of header-only libraries that projects vendor: code from them is library
// code even inside the repository.
bool in_library_folder(std::string_view relative) {
  static constexpr std::array<std::string_view, 6> kFolders = {"cutlass/", "cute/", "cub/", "thrust/",
                                                               "libcudacxx/", "eigen3/"};
  for (auto folder : kFolders) {
    if (relative.rfind(folder, 0) == 0 || relative.find("/" + std::string(folder)) != std::string_view::npos)
      return true;
  }
  return false;
}

}  // namespace

namespace {

// The function's own qualified name in a demangled symbol: what precedes its parameter
// list, without the return type that demangled templates put first
// ("std::vector<int> mylib::top_k<std::less<int> >(std::span<int const>)" names
// mylib::top_k, a repository function that merely uses std:: types).
std::string_view own_name(std::string_view symbol) {
  // The parameter list: the first '(' outside template arguments, past any
  // "(anonymous namespace)" (part of the name).
  std::size_t open = std::string_view::npos;
  int depth = 0;
  for (std::size_t i = 0; i < symbol.size(); ++i) {
    const char c = symbol[i];
    if (c == '<') ++depth;
    else if (c == '>' && depth > 0) --depth;
    else if (c == '(' && depth == 0) {
      if (symbol.compare(i, 21, "(anonymous namespace)") == 0) {
        i += 20;
        continue;
      }
      if (i >= 8 && symbol.compare(i - 8, 8, "operator") == 0) continue;  // operator()
      open = i;
      break;
    }
  }
  std::size_t end = open == std::string_view::npos ? symbol.size() : open;
  // Back from there to the space that ends the return type (outside template arguments).
  depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = end; i-- > 0;) {
    const char c = symbol[i];
    if (c == '>') ++depth;
    else if (c == '<' && depth > 0) --depth;
    else if (c == ' ' && depth == 0) {
      begin = i + 1;
      break;
    }
  }
  return symbol.substr(begin, end - begin);
}

}  // namespace

bool is_library_function(const std::string& function) {
  static constexpr std::array<std::string_view, 19> kPrefixes = {
      "std::",   "__gnu_cxx::", "__cxxabiv1::", "cutlass::", "cute::",    "cub::",       "thrust::",
      "cuda::",  "cooperative_groups::", "nvcuda::", "__cxa_",  "__libc_", "_dl_",        "__GI_",
      "cublas",  "cudnn",       "nccl",      "Eigen::",  "tbb::"};
  // By the function's own name: std:: in its return type or template arguments does not
  // make a repository function the library's.
  const std::string_view name = own_name(function);
  for (auto prefix : kPrefixes)
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

CodeOrigin::CodeOrigin(std::vector<fs::path> roots, ScopeConfig scope) : scope_(std::move(scope)) {
  // Recorded paths may or may not have gone through symlinks: match both spellings.
  for (const auto& r : roots) {
    const fs::path plain = fs::absolute(r).lexically_normal();
    const fs::path resolved = canonical_form(r);
    roots_.push_back(plain);
    if (resolved != plain) roots_.push_back(resolved);
  }
}

std::string CodeOrigin::relative(const std::string& file) const {
  if (file.empty()) return "";
  const fs::path path = fs::path(file).lexically_normal();
  if (!path.is_absolute()) return "";
  for (const auto& root : roots_) {
    if (root == root.root_path()) continue;
    auto [root_end, path_it] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
    if (root_end == root.end() && path_it != path.end()) return path.lexically_relative(root).generic_string();
  }
  return "";
}

bool CodeOrigin::in_scope(const std::string& relative_file) const {
  return !relative_file.empty() && maxcode::in_scope(relative_file, scope_.include, scope_.exclude);
}

bool CodeOrigin::external(const std::string& function, const std::string& file, const std::string& module) const {
  if (is_library_function(function)) return true;
  if (!file.empty()) {
    const std::string rel = relative(file);
    return rel.empty() || in_library_folder(rel);
  }
  // No source file known: the object decides. Unknown objects (JIT code, vdso) count
  // as library code; nothing in them can be edited.
  return module.empty() || relative(module).empty();
}

}  // namespace maxcode
