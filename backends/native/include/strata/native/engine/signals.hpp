// Signal names and the one-line description of a fault, shared by live stops and core files.
#pragma once

#include <cstdint>
#include <string>

namespace strata::native::engine {

std::string signalName(int signo);  // "SIGSEGV"
// "SIGSEGV: address not mapped to object at 0x0"
std::string describeSignal(int signo, int code, std::uint64_t address);
bool isFaultSignal(int signo);

}  // namespace strata::native::engine
