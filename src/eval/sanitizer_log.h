// eval/sanitizer_log.h: the reader of compute-sanitizer's output (memcheck, racecheck,
// synccheck; `--log-file`, one per rank). Each report starts with a line of its own
// ("========= Invalid __global__ write of size 4 bytes", "========= Error: Race reported
// between ...") followed by indented lines ("=========     at k(float*)+0x70 in t.cu:2");
// the run ends with a summary ("========= ERROR SUMMARY: 1 error").
#pragma once

#include <string>
#include <vector>

#include "eval/profile_report.h"

namespace eval {

// Every report in `log`, in order, with rank `rank`, its host backtrace left out; *errors
// gets the summary's count (or the number of reports when there is no summary).
void parse_sanitizer_log(const std::string& log, int rank, std::vector<SanitizerFinding>* out,
                         int* errors);

// The report to show first: the first that names a source line, else the first.
const SanitizerFinding* first_with_line(const std::vector<SanitizerFinding>& v);

}  // namespace eval
