// Where a source file launches GPU kernels, and from which host function: the
// `kernel<<<grid, block>>>(...)` syntax and the runtime calls that take a kernel
// (cudaLaunchKernel, cudaLaunchCooperativeKernel, cudaLaunchKernelEx). Read with the
// same token scanner that locates targets (runner/workspace/source_extent.h), so
// launches in comments, strings or disabled preprocessor lines never count.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace maxcode {

struct LaunchSite {
  std::string kernel;     // the launched name as written, template arguments dropped ("ns::k")
  std::string launcher;   // qualified name of the enclosing function; empty at file scope
  std::string signature;  // that function's declaration, to tell overloads apart
  int line = 0;           // of the launch
};

// Launches whose kernel is named directly. A launch through an expression (a pointer
// variable, `table[i]<<<...>>>`) names no kernel and is left out; a kernel seen only
// that way shows up in value_uses instead.
std::vector<LaunchSite> find_launch_sites(std::string_view text);

// Lines where `name` (unqualified) is used as a value rather than called or launched:
// `auto f = name;`, `&name`, `{name, ...}`, a function argument. A kernel whose name
// appears only this way is launched through a pointer.
std::vector<int> value_uses(std::string_view text, std::string_view name);

}  // namespace maxcode
