// Function names as profiles give them, turned into names people and the source
// locator use: demangled ("_Z9histogramPKhmPj" -> "histogram(unsigned char const*,
// unsigned long, unsigned int*)") and reduced to the qualified name a definition
// carries ("histogram", "ns::Cls::method", "reduce" for "void reduce<256>(float*)").
#pragma once

#include <string>
#include <string_view>

namespace maxcode {

// The demangled form of an Itanium-ABI name (C++ and CUDA kernels); anything else
// (C names, names already demangled) is returned as is, minus a symbol version
// ("memcpy@GLIBC_2.14" -> "memcpy").
std::string demangle(std::string_view name);

// The qualified function name without return type, template arguments, parameters,
// qualifiers, clone suffixes and anonymous namespaces. A lambda or local class maps to
// the function that encloses it. Empty when nothing name-like is left.
std::string function_name_of(std::string_view demangled);

}  // namespace maxcode
