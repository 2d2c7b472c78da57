# The settings of a library's folder configured on its own (cmake -S backends/native/engine ...),
# after its project(): those of the top-level build (C++20 without extensions,
# position-independent code, -Wall -Wextra), and a Debug build unless one is named.
macro(strata_standalone_defaults)
  set(CMAKE_CXX_STANDARD 20)
  set(CMAKE_CXX_STANDARD_REQUIRED ON)
  set(CMAKE_CXX_EXTENSIONS OFF)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  if(NOT CMAKE_BUILD_TYPE)
    set(CMAKE_BUILD_TYPE Debug)
  endif()
  # A member left out of a designated initializer keeps its default; GCC 12 warns on each one.
  add_compile_options(-Wall -Wextra -Wno-missing-field-initializers)
endmacro()
