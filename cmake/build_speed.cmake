# cmake/build_speed.cmake: what makes a first build quick on a 2-core machine (issue 36).
# Measured per source file (CPU seconds, g++ 12, no ccache): -g cost 30-40% of each compile
# (cmd_solve.cpp 29.7 s with it, 17.8 s without); -O3 costs the same as -O2; the test files
# at -O1 cost up to a quarter less than at -O2 (they are at -O0 now, in unity batches: see
# kf_unity below); nlohmann/json, CLI11, fmt and the standard headers are 5-8 s of front
# end in a typical source, which a precompiled header parses once.

# No debug info unless asked: Release. KF_DEBUG=1 ./kforge (scripts/setup.sh) or
# -DCMAKE_BUILD_TYPE=RelWithDebInfo gives -O2 -g back.
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Release (default), RelWithDebInfo (-O2 -g) or Debug" FORCE)
endif()

# Precompiled headers: on by default, off under ccache, which caches the compiles themselves
# and would not cache them with a precompiled header (it needs extra sloppiness settings).
set(kf_pch_default ON)
if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache")
  set(kf_pch_default OFF)
endif()
option(KF_PCH "precompiled headers for the heavy headers (off by default under ccache)" ${kf_pch_default})

# The headers most sources include, directly or through the project's own headers.
set(KF_PCH_HEADERS <nlohmann/json.hpp> <fmt/format.h> <filesystem> <string> <vector> <map> <set>
                   <functional> <memory> <optional> <sstream> <fstream> <chrono> <mutex> <algorithm>)

# kf_pch(TARGET [REUSE_FROM OTHER] [EXTRA <header>...]): TARGET's sources start from the
# precompiled KF_PCH_HEADERS (plus EXTRA), or from OTHER's, which must have the same flags.
function(kf_pch target)
  cmake_parse_arguments(arg "" "REUSE_FROM" "EXTRA" ${ARGN})
  if(NOT KF_PCH)
    return()
  endif()
  if(arg_REUSE_FROM)
    target_precompile_headers(${target} REUSE_FROM ${arg_REUSE_FROM})
  else()
    target_precompile_headers(${target} PRIVATE ${KF_PCH_HEADERS} ${arg_EXTRA})
  endif()
endfunction()

# Unity batches: the test files compiled a dozen to a compile. Measured on the 2-core
# machine (g++ 12, precompiled headers on): nine of sandbox/'s test files took 19.5 s one
# by one and 7.2 s as one batch, the headers' templates being instantiated once a batch.
# -DKF_UNITY=OFF compiles them one by one (to find a file that no longer compiles alone).
option(KF_UNITY "compile the test files in unity batches" ON)
function(kf_unity target)
  if(KF_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 12)
  endif()
endfunction()
