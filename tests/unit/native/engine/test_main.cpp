// doctest entry point for the ptrace engine's tests (hardware watchpoint cases gated: hardware_gate.hpp).
#include "../hardware_gate.hpp"
