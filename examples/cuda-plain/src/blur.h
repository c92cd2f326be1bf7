#pragma once

// A 3x3 blur (weights 1 2 1 / 2 4 2 / 1 2 1, divided by 16) of a width x height image
// of floats in device memory; pixels beyond the border repeat the nearest edge pixel.
// Launches on the default stream.
void blur(const float* in, float* out, int width, int height);
