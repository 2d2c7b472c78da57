// Reads a CUPTI activity buffer (cuptiActivityGetNextRecord) into ParsedActivity entries:
// the one parser behind live collection and the tests' synthetic buffers.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "publisher.hpp"

namespace strata::cuda::collector {

// Runtime and driver API names by callback id ("cudaLaunchKernel"), read from CUPTI once.
class ApiNames {
 public:
  void load();  // cuptiGetCallbackName for every id; works without a GPU
  const char* name(CUpti_CallbackDomain domain, std::uint32_t cbid) const;  // nullptr: unknown

 private:
  std::vector<std::string> runtime_, driver_;
};

struct ParseResult {
  std::size_t records = 0;  // records read
  std::size_t skipped = 0;  // of kinds Strata does not keep
  CUptiResult end = CUPTI_SUCCESS;  // CUPTI_ERROR_MAX_LIMIT_REACHED: read to the end
};

// Appends one entry per record. Times pass through as CUPTI gave them (0 when unknown); an
// end before its start is taken as the start.
ParseResult parseActivityBuffer(std::uint8_t* buffer, std::size_t validSize, const ApiNames& names,
                                std::vector<ParsedActivity>& out);

}  // namespace strata::cuda::collector
