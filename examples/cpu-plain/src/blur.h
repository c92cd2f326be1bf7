#pragma once

// A 3x3 blur (weights 1 2 1 / 2 4 2 / 1 2 1, divided by 16) of a width x height image
// of floats, row by row; pixels beyond the border repeat the nearest edge pixel.
void blur(const float* in, float* out, int width, int height);
