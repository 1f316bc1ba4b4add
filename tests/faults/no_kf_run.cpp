// fault: all_reduce world=2 expect=load_error
// Defines kf_setup only: the loader names the missing kf_run.
#include "common.h"

KF_FAULT_SETUP
