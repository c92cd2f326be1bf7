// A few small cases against values worked out by hand.
#include <cmath>
#include <cstdio>
#include <vector>

#include "blur.h"

static int failures = 0;

static void expect(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-5f * (1 + std::fabs(want[i]))) {
      std::printf("FAIL %s: pixel %zu = %g, expected %g\n", what, i, got[i], want[i]);
      ++failures;
      return;
    }
}

int main() {
  {  // a constant image stays constant
    std::vector<float> in(5 * 4, 3.5f), out(in.size());
    blur(in.data(), out.data(), 5, 4);
    expect("constant", out, std::vector<float>(in.size(), 3.5f));
  }
  {  // one pixel
    std::vector<float> in{2.0f}, out(1);
    blur(in.data(), out.data(), 1, 1);
    expect("one pixel", out, {2.0f});
  }
  {  // a single bright pixel in the middle of a 3x3 image spreads as the kernel
    std::vector<float> in(9, 0.0f), out(9);
    in[4] = 16.0f;
    blur(in.data(), out.data(), 3, 3);
    expect("impulse", out, {1, 2, 1, 2, 4, 2, 1, 2, 1});
  }
  {  // a row: edges repeat
    std::vector<float> in{0, 4, 8}, out(3);
    blur(in.data(), out.data(), 3, 1);
    expect("row", out, {1, 4, 7});
  }
  if (failures == 0) std::printf("blur: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
