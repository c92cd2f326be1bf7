#include "runner/evaluate/audit.h"

#include <cctype>
#include <cstdlib>

#include "runner/evaluate/output_compare.h"

namespace maxcode {
namespace {

// Printing this many numbers or fewer is a summary (a checksum, a last value): a wrong
// result can match it by chance, and it says nothing about most of the output.
constexpr std::size_t kSummaryNumbers = 16;

std::size_t count_numbers(const std::string& output) {
  std::size_t n = 0;
  std::size_t i = 0;
  while (i < output.size()) {
    while (i < output.size() && std::isspace(static_cast<unsigned char>(output[i]))) ++i;
    const std::size_t start = i;
    while (i < output.size() && !std::isspace(static_cast<unsigned char>(output[i]))) ++i;
    if (i == start) break;
    const std::string token = output.substr(start, i - start);
    char* end = nullptr;
    std::strtod(token.c_str(), &end);
    n += end == token.c_str() + token.size();
  }
  return n;
}

// What the audit found: weaknesses first in the report, then what holds.
struct Findings {
  std::vector<std::string> weak, fine;
};

// The printed output: across seeds, and with every input perturbed.
void audit_printed_output(const AuditInputs& in, BenchmarkAudit& a, Findings& f) {
  if (in.references.empty()) return;
  if (in.compare_output) {
    bool same = true;
    const Tolerance exact{0, 0, &in.varying};
    for (const auto& r : in.references) same = same && compare_outputs(in.references.front(), r, exact).equal;
    a.seed_changes_output = !same;
    a.printed_numbers = count_numbers(in.references.front());
    a.summary_only = a.printed_numbers <= kSummaryNumbers;
    if (same)
      f.weak.push_back(
          "its output is the same for every MAXCODE_SEED: it does not read the seed, so the "
          "comparison of printed output sees one input only");
    else
      f.fine.push_back("its output changes with MAXCODE_SEED");
    if (a.summary_only)
      f.weak.push_back("it prints only a summary (" + std::to_string(a.printed_numbers) +
                       " number(s)): a wrong result can match it by chance");
  }
  if (in.perturbed_output) {
    const Comparison c = compare_outputs(in.references.front(), *in.perturbed_output, {in.rtol, in.atol, &in.varying});
    a.input_changes_output = !c.equal;
    if (c.equal)
      f.weak.push_back(
          "its printed output does not depend on the input: changing every input element "
          "on every call left it unchanged");
  }
}

// The calls the shim observed: whether each call meets the same input, and whether it
// finds the previous call's result waiting in its output buffers.
void audit_calls(const std::vector<CallRecord>& calls, BenchmarkAudit& a, Findings& f) {
  a.calls = static_cast<long>(calls.size());
  if (calls.empty()) f.weak.push_back("it never called the target");
  bool reused = calls.size() > 1, unpoisoned = calls.size() > 1, any_input = false, any_output = false;
  for (std::size_t i = 1; i < calls.size(); ++i) {
    for (const CallArg& arg : calls[i].args) {
      const CallArg* before = nullptr;
      for (const CallArg& b : calls[i - 1].args)
        if (b.name == arg.name) before = &b;
      if (!before) continue;
      if (arg.input) {
        any_input = true;
        reused = reused && arg.pointer == before->pointer && arg.entry_hash == before->entry_hash;
      } else {
        any_output = true;
        unpoisoned = unpoisoned && arg.pointer == before->pointer && arg.entry_hash == before->exit_hash;
      }
    }
  }
  if (any_input) {
    a.inputs_reused = reused;
    if (reused)
      f.weak.push_back("it passes the same input, unchanged, on all " + std::to_string(calls.size()) +
                       " calls: a result cached by pointer or by content passes it");
  }
  if (any_output) {
    a.outputs_unpoisoned = unpoisoned;
    if (unpoisoned)
      f.weak.push_back(
          "each call finds the previous call's result in its output buffers: a call that "
          "skips its work leaves a correct-looking output");
  }
}

// Which call check guards this benchmark, in words.
void describe_call_check(const AuditInputs& in, BenchmarkAudit& a, Findings& f) {
  if (in.shim_problem == kTimedByKernels) {
    a.call_check = "per-launch consistency of the counted kernels (CUPTI); the call shim could not be made "
                   "on this GPU launcher (see the warnings), so inputs are not perturbed nor outputs poisoned";
    f.weak.push_back(
        "its outputs are not poisoned nor its inputs perturbed by maxcode (a GPU launcher): "
        "per-launch consistency guards against skipped work, the printed output against the rest");
  } else if (!in.shim_problem.empty()) {
    a.call_check = "none: " + in.shim_problem;
    f.weak.push_back("maxcode cannot add its call check (" + in.shim_problem +
                     (in.compare_output
                          ? "): only the benchmark's own output guards against skipped work"
                          : "): its output is not compared, so only the tests guard against skipped work"));
  } else if (!in.outputs_sized) {
    a.call_check = "per-call times, inputs perturbed where their size is known or found; no output of the target "
                   "could be sized and compared per call (describe it in targets.interface)";
  } else {
    a.call_check = "every run, checked and timed alike, through maxcode's wrapper: inputs perturbed anew each "
                   "round, every call's outputs compared element by element with the original's (" + in.interface +
                   " interface; sizes the signature does not give found at run time)";
  }
}

}  // namespace

BenchmarkAudit audit_benchmark(const AuditInputs& in) {
  BenchmarkAudit a;
  a.benchmark = in.benchmark;
  a.interface = in.interface;
  Findings f;
  audit_printed_output(in, a, f);
  if (in.observed) audit_calls(*in.observed, a, f);
  describe_call_check(in, a, f);
  a.findings = f.weak;
  a.findings.insert(a.findings.end(), f.fine.begin(), f.fine.end());
  return a;
}

}  // namespace maxcode
