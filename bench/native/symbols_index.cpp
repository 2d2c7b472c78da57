// Bench: how fast the lazy DWARF index answers a function name and a file:line in a big library.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "strata/native/symbols/object_symbols.hpp"

using namespace strata::native::symbols;

namespace {
double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  std::string path;
  if (argc > 1 && argv[1][0] != 0) {
    path = argv[1];
  } else {
    const char* home = std::getenv("HOME");
    path = std::string(home ? home : "/root") + "/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0";
  }
  std::string function = argc > 2 ? argv[2] : "PyDict_SetItem";
  std::string file = argc > 3 ? argv[3] : "Objects/dictobject.c";
  int line = argc > 4 ? std::atoi(argv[4]) : 1900;

  auto t0 = std::chrono::steady_clock::now();
  auto opened = ObjectSymbols::open(path);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().message.c_str());
    return 1;
  }
  auto& obj = *opened;
  std::printf("open %-50s %8.2f ms (debug info: %s)\n", path.c_str(), msSince(t0), obj->hasDebugInfo() ? "yes" : "no");

  t0 = std::chrono::steady_clock::now();
  auto fns = obj->functionsNamed(function);
  double fnMs = msSince(t0);
  if (!fns) {
    std::fprintf(stderr, "%s\n", fns.error().message.c_str());
    return 1;
  }
  auto& f = fns->front();
  std::printf("function %-30s %8.2f ms  entry 0x%llx after prologue 0x%llx (%zu found)\n", function.c_str(), fnMs,
              (unsigned long long)f.entry, (unsigned long long)obj->afterPrologue(f), fns->size());

  t0 = std::chrono::steady_clock::now();
  auto lines = obj->addressesForLine(file, line);
  double lineMs = msSince(t0);
  if (!lines) {
    std::fprintf(stderr, "%s\n", lines.error().message.c_str());
    return 1;
  }
  std::printf("line %s:%d → line %d, %zu address(es) %8.2f ms\n", file.c_str(), line, lines->line,
              lines->addresses.size(), lineMs);

  t0 = std::chrono::steady_clock::now();
  auto loc = obj->locationForAddress(f.entry);
  std::printf("address → line %s:%d %8.3f ms\n", loc ? loc->file.c_str() : "?", loc ? loc->line : 0, msSince(t0));
  std::printf("CUs: %zu, line tables parsed: %zu\n", obj->cuCount(), obj->parsedCuLineTables());

  t0 = std::chrono::steady_clock::now();
  auto again = obj->functionsNamed(function);
  std::printf("function again %8.3f ms\n", msSince(t0));
  return again ? 0 : 1;
}
