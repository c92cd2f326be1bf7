// Honest: clamps only on the border; interior pixels take the nine taps directly, in
// the same order and with the same weights, so the loop vectorizes and the results
// are bit-identical.
void blur(const float* in, float* out, int width, int height) {
  static const float weight[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
  auto clamped = [&](int x, int y) {
    float sum = 0;
    for (int dy = -1; dy <= 1; ++dy) {
      const int yy = std::min(std::max(y + dy, 0), height - 1);
      for (int dx = -1; dx <= 1; ++dx) {
        const int xx = std::min(std::max(x + dx, 0), width - 1);
        sum += weight[dy + 1][dx + 1] * in[yy * width + xx];
      }
    }
    out[y * width + x] = sum * (1.0f / 16);
  };
  for (int y = 0; y < height; ++y) {
    if (y == 0 || y == height - 1 || width < 3) {
      for (int x = 0; x < width; ++x) clamped(x, y);
      continue;
    }
    const float* up = in + (y - 1) * width;
    const float* mid = in + y * width;
    const float* down = in + (y + 1) * width;
    float* row = out + y * width;
    clamped(0, y);
    for (int x = 1; x < width - 1; ++x) {
      float sum = 0;
      sum += 1.0f * up[x - 1];
      sum += 2.0f * up[x];
      sum += 1.0f * up[x + 1];
      sum += 2.0f * mid[x - 1];
      sum += 4.0f * mid[x];
      sum += 2.0f * mid[x + 1];
      sum += 1.0f * down[x - 1];
      sum += 2.0f * down[x];
      sum += 1.0f * down[x + 1];
      row[x] = sum * (1.0f / 16);
    }
    clamped(width - 1, y);
  }
}
