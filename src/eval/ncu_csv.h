// eval/ncu_csv.h: the reader of Nsight Compute's CSV (`ncu --import R --csv`, the
// details page): one row per kernel launch and metric, under a header that names the
// columns ("ID","Process ID","Process Name","Host Name","Kernel Name",...,"Metric Name",
// "Metric Unit","Metric Value"). Values carry thousands separators ("1,664") and units
// ncu may have scaled ("usecond", "Kbyte"); both are undone here.
#pragma once

#include <string>
#include <vector>

#include "eval/profile_report.h"

namespace eval {

// One CSV line split into its fields ("a","b,c","d""e" -> a | b,c | d"e).
std::vector<std::string> split_csv_line(const std::string& line);

// "1,664" -> 1664; "n/a" and other words -> false.
bool parse_metric_number(const std::string& text, double* out);

// A value in `unit` into the metric's base unit (nanoseconds, bytes; per second rates
// too); anything else (%, register/thread, block) is left as it is.
double to_base_unit(double value, const std::string& unit);

// Every kernel in `csv` (lines before the header, such as ncu's own ==PROF== lines, are
// skipped), each with rank `rank` and its side from its process's name: kforge-runner is
// the candidate's process, kforge-rank the judge's, where the baseline runs (and the
// candidate itself when it is a problem's baseline: `judge_side`). False with *err when
// there is no header with the columns this needs.
bool parse_ncu_csv(const std::string& csv, int rank, sandbox::Role judge_side,
                   std::vector<KernelProfile>* out, std::string* err);

}  // namespace eval
