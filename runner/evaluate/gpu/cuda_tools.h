// Where the CUDA toolkit's programs are (ncu, compute-sanitizer): on PATH, else in
// $CUDA_HOME/bin or /usr/local/cuda/bin, as on the GPU runners.
#pragma once

#include <string>

namespace maxcode {

// The full path of `name`, or empty when it is nowhere to be found.
std::string find_cuda_tool(const std::string& name);

}  // namespace maxcode
