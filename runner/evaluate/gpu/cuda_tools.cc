#include "runner/evaluate/gpu/cuda_tools.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace maxcode {

// PATH and CUDA_HOME are read here, as nvcc's own wrappers read them: a program lookup
// for a child (nvcc, ncu), not maxcode's configuration.
std::string find_cuda_tool(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string list = path;
    for (std::size_t at = 0; at <= list.size();) {
      std::size_t colon = list.find(':', at);
      if (colon == std::string::npos) colon = list.size();
      if (colon > at) dirs.push_back(list.substr(at, colon - at));
      at = colon + 1;
    }
  }
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  for (const std::string& dir : dirs) {
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
  }
  return {};
}

}  // namespace maxcode
