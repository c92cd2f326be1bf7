// Per-call consistency: the target's work must be alike on every call of the benchmark.
//
// A candidate that caches its result (by pointer, by call count, by a sample of the
// input) is costly once and trivial afterwards; one that works on some calls only
// alternates costly and trivial calls. The original's calls, on the same benchmark,
// are alike. The rule compares the two: it rejects only when the candidate has both
// costly calls (near the original's per-call time) and trivial ones (a twentieth of
// it or less, and of the candidate's own costly calls) while the original has no
// trivial calls, so a candidate that is uniformly faster passes, and so does an
// original whose own calls vary.
#pragma once

#include <string>
#include <vector>

namespace maxcode {

// Empty when the candidate's per-call times are consistent with the original's, else
// the reason, with the figures ("per-call times: first 12.1 ms, then median 20 µs;
// the original's calls are alike (median 12.0 ms)").
std::string check_call_times(const std::vector<double>& original_s, const std::vector<double>& candidate_s);

}  // namespace maxcode
