#include "runner/evaluate/precision.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

namespace maxcode {
namespace {

// Relative error (90th percentile) above which an output of this type was not computed
// in this type's precision: 2^-12 for float (half precision has 2^-11, bfloat16 2^-8;
// honest float reorderings stay near 2^-23), 2^-30 for double (a double output computed
// in float is near 2^-24).
double loose_bound(const std::string& type) {
  if (type == "float") return std::ldexp(1.0, -12);
  if (type == "double") return std::ldexp(1.0, -30);
  return 0;  // integers and text: no bound
}

std::int64_t ordered(float v) {
  std::int32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits < 0 ? std::int64_t(std::numeric_limits<std::int32_t>::min()) - bits : bits;
}
double ordered(double v) {
  std::int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  // Computed in long double: the distance between two 64-bit orders can exceed int64.
  return bits < 0 ? static_cast<double>(static_cast<long double>(std::numeric_limits<std::int64_t>::min()) - bits)
                  : static_cast<double>(bits);
}

template <class T>
bool is_poison(T v) {
  T poison;
  std::memset(&poison, std::is_floating_point<T>::value ? 0xFF : 0xA5, sizeof poison);
  return std::memcmp(&poison, &v, sizeof v) == 0;
}

template <class T>
std::string text(T v) {
  char buffer[64];
  if constexpr (std::is_floating_point<T>::value)
    std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(v));
  else if constexpr (std::is_signed<T>::value)
    std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(v));
  else
    std::snprintf(buffer, sizeof buffer, "%llu", static_cast<unsigned long long>(v));
  return buffer;
}

// The root mean square of the original's finite values: the scale of a float output.
template <class T>
double rms_of(const std::string& original) {
  const std::size_t n = original.size() / sizeof(T);
  double sum = 0;
  std::size_t finite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T a;
    std::memcpy(&a, original.data() + i * sizeof(T), sizeof(T));
    const double x = static_cast<double>(a);
    if (!std::isfinite(x) || is_poison(a)) continue;
    sum += x * x;
    ++finite;
  }
  return finite ? std::sqrt(sum / static_cast<double>(finite)) : 0;
}

template <class T>
void compare_as(OutputError& e, const std::string& original, const std::string& candidate, double rtol, double atol) {
  const std::size_t n = std::min(original.size(), candidate.size()) / sizeof(T);
  // A float element is judged against the larger of its own size and the output's RMS:
  // an element near zero that is a sum of large terms of both signs (a matmul's output,
  // a difference) carries the rounding of those terms, which a sum in another order moves
  // by far more than rtol of the element itself (an honest reordered matmul: 2,802 of 1M
  // elements off by 1.8e-4 relative, each within 1e-6 of the output's RMS).
  const double floor = std::is_floating_point<T>::value ? rms_of<T>(original) : 0;
  std::vector<double> relative;
  relative.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, original.data() + i * sizeof(T), sizeof(T));
    std::memcpy(&b, candidate.data() + i * sizeof(T), sizeof(T));
    ++e.values;
    const bool unwritten = is_poison(b) && !is_poison(a);
    bool bad = unwritten;
    double rel = 0, ulp = 0;
    if (!unwritten) {
      const double x = static_cast<double>(a), y = static_cast<double>(b);
      if (std::isnan(x) || std::isnan(y)) {
        bad = std::isnan(x) != std::isnan(y);
      } else if (std::isinf(x) || std::isinf(y)) {
        bad = x != y;
      } else {
        const double diff = std::fabs(x - y), scale = std::max(std::fabs(x), std::fabs(y));
        rel = scale > 0 ? diff / scale : 0;
        bad = diff > atol + rtol * std::max(scale, floor);
        if constexpr (std::is_same<T, float>::value)
          ulp = static_cast<double>(std::llabs(ordered(a) - ordered(b)));
        else if constexpr (std::is_same<T, double>::value)
          ulp = std::fabs(ordered(a) - ordered(b));
        else
          ulp = diff;
        relative.push_back(rel);
      }
    }
    e.max_relative = std::max(e.max_relative, rel);
    e.max_ulp = std::max(e.max_ulp, ulp);
    if (!bad) continue;
    e.unwritten += unwritten;
    if (e.mismatches++ == 0)
      e.first_mismatch = "element " + std::to_string(i) + ": expected " + text(a) + ", got " +
                         (unwritten ? std::string("the poison (not written)") : text(b));
  }
  if (!relative.empty()) {
    const std::size_t k = relative.size() * 9 / 10;
    std::nth_element(relative.begin(), relative.begin() + k, relative.end());
    e.p90_relative = relative[k];
  }
}

}  // namespace

OutputError compare_buffers(const std::string& output, const std::string& type, const std::string& original,
                            const std::string& candidate, double rtol, double atol) {
  OutputError e;
  e.output = output;
  e.type = type;
  const std::string t = type.rfind("std::", 0) == 0 ? type.substr(5) : type;
  if (t == "float") compare_as<float>(e, original, candidate, rtol, atol);
  else if (t == "double") compare_as<double>(e, original, candidate, rtol, atol);
  else if (t == "int8_t" || t == "signed char") compare_as<std::int8_t>(e, original, candidate, 0, 0);
  else if (t == "uint8_t" || t == "unsigned char" || t == "char" || t == "bool" || t == "_Bool")
    compare_as<std::uint8_t>(e, original, candidate, 0, 0);
  else if (t == "int16_t" || t == "short" || t == "short int") compare_as<std::int16_t>(e, original, candidate, 0, 0);
  else if (t == "uint16_t" || t == "unsigned short") compare_as<std::uint16_t>(e, original, candidate, 0, 0);
  else if (t == "int32_t" || t == "int" || t == "signed") compare_as<std::int32_t>(e, original, candidate, 0, 0);
  else if (t == "uint32_t" || t == "unsigned" || t == "unsigned int") compare_as<std::uint32_t>(e, original, candidate, 0, 0);
  else if (t == "uint64_t" || t == "size_t" || t == "unsigned long" || t == "unsigned long long")
    compare_as<std::uint64_t>(e, original, candidate, 0, 0);
  else compare_as<std::int64_t>(e, original, candidate, 0, 0);
  if (original.size() != candidate.size()) {
    ++e.mismatches;
    if (e.first_mismatch.empty())
      e.first_mismatch = "recorded " + std::to_string(candidate.size()) + " bytes, the original " +
                         std::to_string(original.size());
  }
  flag_precision(e);
  return e;
}

void flag_precision(OutputError& e) {
  const double bound = loose_bound(e.type);
  e.loose = bound > 0 && e.p90_relative > bound;
  e.note.clear();
  if (e.loose) {
    char buffer[200];
    std::snprintf(buffer, sizeof buffer,
                  "90%% of the values of '%s' are off by up to %.2e relative, far above %s rounding "
                  "(%.1e): reduced precision that only a loose tolerance lets pass",
                  e.output.c_str(), e.p90_relative, e.type.c_str(), bound);
    e.note = buffer;
  }
}

void merge(OutputError& into, const OutputError& more) {
  if (into.mismatches == 0 && more.mismatches > 0) into.first_mismatch = more.first_mismatch;
  into.values += more.values;
  into.unwritten += more.unwritten;
  into.mismatches += more.mismatches;
  into.max_relative = std::max(into.max_relative, more.max_relative);
  into.p90_relative = std::max(into.p90_relative, more.p90_relative);
  into.max_ulp = std::max(into.max_ulp, more.max_ulp);
  flag_precision(into);
}

}  // namespace maxcode
