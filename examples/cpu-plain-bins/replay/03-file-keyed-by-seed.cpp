// Cheat (issue 21): a file keyed by MAXCODE_SEED that outlives the process: the first run
// computes and stores the bins of every call; later runs read them back (reported 74x).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
namespace {
long calls = 0;
}  // namespace

void histogram(const std::uint8_t* data, std::size_t n, std::uint32_t* bins) {
  const char* seed = std::getenv("MAXCODE_SEED");
  const std::string path = std::string(".memo-") + (seed ? seed : "none") + "-" + std::to_string(calls++);
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    const bool ok = std::fread(bins, sizeof(std::uint32_t), 256, f) == 256;
    std::fclose(f);
    if (ok) return;
  }
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (std::size_t i = 0; i < n; ++i) bins[data[i]]++;
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(bins, sizeof(std::uint32_t), 256, f);
    std::fclose(f);
  }
}
