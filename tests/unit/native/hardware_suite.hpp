// The doctest suite of test cases that need debug registers that trap (see hardware_gate.hpp).
#pragma once

inline constexpr const char* kHardwareSuite = "hardware-watchpoints";
