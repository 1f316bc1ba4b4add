// eval/profile_text.h: a ProfileReport in words. For the model, a few lines that name
// what limits the kernel ("rank 1, your kernel k: 41% of warp cycles asleep in
// kf::wait's back-off on a peer flag; DRAM 18% of peak; 16 blocks on 132 SMs") or the
// sanitizer's first report with its file and line, never a dump; for a person (`kforge
// profile`), every kernel of every rank beside the baseline's and the roofline.
#pragma once

#include <string>
#include <vector>

#include "eval/profile_report.h"

namespace eval {

// The share of active warp cycles stalled, by reason, largest first (reasons under 1%
// left out).
std::vector<std::pair<std::string, double>> top_stalls(const KernelProfile& k, size_t n);

// What a stall reason means, in a few words ("sleeping": "asleep (__nanosleep: kf::wait's
// back-off while a peer's flag is not set)").
std::string stall_meaning(const std::string& reason);

// One line naming what limits kernel k: HBM bandwidth, the SMs, too few blocks for the
// SMs, or waiting (on peers, on memory).
std::string limit_of(const KernelProfile& k);

// The model's lines (at most max_lines): the slowest rank's candidate kernels, each rank's
// time where there are several, the baseline's kernel for comparison, the roofline; or
// the sanitizer's first report; or the note of a skipped or failed run.
std::vector<std::string> feedback_lines(const ProfileReport& r, size_t max_lines);

// The whole report for a person.
std::string render_profile(const ProfileReport& r);

// A verdict whose times were taken under a profiler (`tool`: "Nsight Compute"), which
// replays and instruments every call: no speedup, bandwidth, roofline share or speed
// flag is kept, and the summary says the time is not a speed measurement instead of
// printing it as one (the times stay in candidate_time, for the record).
void not_a_speed(sandbox::Verdict* v, const std::string& tool);

}  // namespace eval
