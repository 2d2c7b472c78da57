// doctest entry point for the NativeDebugger tests (hardware watchpoint cases gated: hardware_gate.hpp).
#include "../hardware_gate.hpp"
