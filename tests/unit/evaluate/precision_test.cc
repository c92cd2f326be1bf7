#include "runner/evaluate/precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace maxcode {
namespace {

template <class T>
std::string bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 1.0f + static_cast<float>(i) * 0.37f;
  return v;
}

// Rounds to 11 significant bits, as half-precision arithmetic would.
float to_half_precision(float x) {
  int exponent = 0;
  const float mantissa = std::frexp(x, &exponent);
  return std::ldexp(std::round(mantissa * 2048.0f) / 2048.0f, exponent);
}

TEST(Precision, IdenticalBuffersHaveNoError) {
  const auto v = ramp(1000);
  OutputError e = compare_buffers("out", "float", bytes(v), bytes(v), 1e-5, 0);
  EXPECT_EQ(e.values, 1000u);
  EXPECT_EQ(e.mismatches, 0u);
  EXPECT_EQ(e.max_relative, 0);
  EXPECT_EQ(e.max_ulp, 0);
  EXPECT_FALSE(e.loose);
}

TEST(Precision, CountsUlpsAndRelativeError) {
  auto a = ramp(10), b = a;
  b[3] = std::nextafter(std::nextafter(b[3], 100.0f), 100.0f);
  OutputError e = compare_buffers("out", "float", bytes(a), bytes(b), 1e-5, 0);
  EXPECT_EQ(e.max_ulp, 2);
  EXPECT_GT(e.max_relative, 0);
  EXPECT_EQ(e.mismatches, 0u);
}

TEST(Precision, PoisonLeftInPlaceIsUnwritten) {
  auto a = ramp(8), b = a;
  std::memset(&b[5], 0xFF, sizeof(float));
  OutputError e = compare_buffers("out", "float", bytes(a), bytes(b), 1e-5, 0);
  EXPECT_EQ(e.mismatches, 1u);
  EXPECT_EQ(e.unwritten, 1u);
  EXPECT_NE(e.first_mismatch.find("element 5"), std::string::npos) << e.first_mismatch;
  EXPECT_NE(e.first_mismatch.find("not written"), std::string::npos) << e.first_mismatch;
}

TEST(Precision, HalfPrecisionUnderALooseToleranceIsFlagged) {
  auto a = ramp(4096), b = a;
  for (float& x : b) x = to_half_precision(x);
  OutputError e = compare_buffers("out", "float", bytes(a), bytes(b), 1e-2, 0);
  EXPECT_EQ(e.mismatches, 0u) << "within the loose tolerance";
  EXPECT_TRUE(e.loose);
  EXPECT_NE(e.note.find("reduced precision"), std::string::npos) << e.note;
}

TEST(Precision, HonestReorderingIsNotFlagged) {
  auto a = ramp(4096), b = a;
  for (std::size_t i = 0; i < b.size(); i += 3) b[i] = std::nextafter(b[i], 0.0f);
  EXPECT_FALSE(compare_buffers("out", "float", bytes(a), bytes(b), 1e-5, 0).loose);
}

// A matmul's outputs summed in two orders (one accumulator, and even and odd steps
// apart, as examples/cuda-ops/replay/03 does), on inputs of both signs: elements near
// zero move by far more than rtol of themselves, all within rtol of the output's scale.
TEST(Precision, AReorderedSumPassesWhereCancellationLeavesAnElementNearZero) {
  const int n = 64, k = 1024;
  std::vector<float> a(n * k), b(k * n), one(n * n), two(n * n);
  unsigned state = 12345;
  auto next = [&state] { state = state * 1664525u + 1013904223u; return (state >> 8) / 16777216.0f - 0.5f; };
  for (float& x : a) x = next();
  for (float& x : b) x = next();
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      float acc = 0, even = 0, odd = 0;
      for (int i = 0; i < k; ++i) acc += a[r * k + i] * b[i * n + c];
      for (int i = 0; i < k; i += 2) even += a[r * k + i] * b[i * n + c], odd += a[r * k + i + 1] * b[(i + 1) * n + c];
      one[r * n + c] = acc;
      two[r * n + c] = even + odd;
    }
  const OutputError e = compare_buffers("c", "float", bytes(one), bytes(two), 1e-4, 0);
  EXPECT_GT(e.max_relative, 1e-4) << "some element is off by more than rtol of itself";
  EXPECT_EQ(e.mismatches, 0u) << e.first_mismatch;
  // What a cheat leaves stays caught: a stale element (another call's value), and values
  // rounded to 10 bits.
  auto stale = two;
  stale[7] = two[8];
  EXPECT_EQ(compare_buffers("c", "float", bytes(one), bytes(stale), 1e-4, 0).mismatches, 1u);
  auto rounded = two;
  for (float& x : rounded) x = to_half_precision(x);
  EXPECT_GT(compare_buffers("c", "float", bytes(one), bytes(rounded), 1e-4, 0).mismatches, 100u);
}

TEST(Precision, IntegersMustMatchExactly) {
  std::vector<int> a{1, 2, 3}, b{1, 2, 4};
  OutputError e = compare_buffers("bins", "int", bytes(a), bytes(b), 1e-2, 0);
  EXPECT_EQ(e.mismatches, 1u);
  EXPECT_EQ(e.max_ulp, 1);
}

TEST(Precision, MergeKeepsTheLargestErrors) {
  OutputError a, b;
  a.output = b.output = "out";
  a.type = b.type = "float";
  a.values = 10;
  b.values = 10;
  a.max_relative = 1e-7;
  b.max_relative = 3e-7;
  b.max_ulp = 4;
  merge(a, b);
  EXPECT_EQ(a.values, 20u);
  EXPECT_EQ(a.max_relative, 3e-7);
  EXPECT_EQ(a.max_ulp, 4);
}

}  // namespace
}  // namespace maxcode
