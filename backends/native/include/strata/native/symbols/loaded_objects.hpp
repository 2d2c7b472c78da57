// The ELF objects of an address space, from its mappings: a live process's /proc/PID/maps, or
// the file notes of a core.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "strata/proc_maps.hpp"
#include "strata/native/target_access.hpp"
#include "strata/result.hpp"

namespace strata::native::symbols {

// Each mapped ELF file once, with its load bias (from the mapping of its first page). `open`
// names the file to read for a mapped path (a sysroot, /proc/PID/root); the objects carry it.
std::vector<LoadedObject> loadedObjectsFromMappings(const std::vector<Mapping>& maps,
                                                    const std::function<std::string(const std::string&)>& open = {});

}  // namespace strata::native::symbols
