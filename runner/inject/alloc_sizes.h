// Heap block sizes for the call shim (alloc_sizes.cc); part of libmaxcode_shim.so.
#pragma once

#include <stddef.h>

// Bytes from `p` to the end of the heap block that `p` starts; 0 when `p` does not start
// a block allocated while the library was loaded (the stack, a module's data, a pointer
// into the middle of a block).
extern "C" size_t maxcode_alloc_extent(const void* p);
