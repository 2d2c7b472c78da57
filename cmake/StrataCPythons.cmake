# The CPythons a build can find, what each says of itself, and offset tables generated from
# their internal headers: one place for the Python memory reader's layouts
# (backends/python/remote), the attach's pending-call queues (backends/python/attach), and the
# extensions built once per interpreter (the agent's core, examples/mixed).

# What the interpreter PY says of itself, in the caller's OUT_FOUND (false when PY does not
# run), OUT_VERSION (X.Y.Z), OUT_MAJOR, OUT_MINOR, OUT_INCLUDE (its headers' folder) and
# OUT_EXT_SUFFIX (the file name ending of its extension modules).
function(strata_python_info out py)
  execute_process(
    COMMAND "${py}" -c "import sys,sysconfig; v=sys.version_info; print(f'{v[0]}.{v[1]}.{v[2]}'); print(v[0]); print(v[1]); print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX'))"
    OUTPUT_VARIABLE info RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(${out}_FOUND FALSE PARENT_SCOPE)
    return()
  endif()
  string(REPLACE "\n" ";" info "${info}")
  list(GET info 0 version)
  list(GET info 1 major)
  list(GET info 2 minor)
  list(GET info 3 include)
  list(GET info 4 suffix)
  set(${out}_FOUND TRUE PARENT_SCOPE)
  set(${out}_VERSION "${version}" PARENT_SCOPE)
  set(${out}_MAJOR "${major}" PARENT_SCOPE)
  set(${out}_MINOR "${minor}" PARENT_SCOPE)
  set(${out}_INCLUDE "${include}" PARENT_SCOPE)
  set(${out}_EXT_SUFFIX "${suffix}" PARENT_SCOPE)
endfunction()

# pyenv's CPythons 3.10..3.19 (the versions under $PYENV_ROOT, then under ~/.pyenv): sets OUT.
function(strata_pyenv_pythons out)
  set(pythons "")
  foreach(root "$ENV{PYENV_ROOT}" "$ENV{HOME}/.pyenv")
    if(root AND IS_DIRECTORY "${root}/versions")
      file(GLOB found "${root}/versions/3.1[0-9]*/bin/python3.1[0-9]")
      list(APPEND pythons ${found})
    endif()
  endforeach()
  set(${out} "${pythons}" PARENT_SCOPE)
endfunction()

# Every CPython 3.MIN..3.MAX found: STRATA_PYTHONS, pyenv's versions, python3.N in /usr/bin,
# and Debian's newer ones that scripts/debian-cpython.sh put under build/cpython3.N.
# Sets OUT to entries "PATH|X.Y.Z|MINOR|INCLUDE_DIR", one per real path.
function(strata_find_cpythons out min max)
  set(candidates ${STRATA_PYTHONS})
  file(GLOB fetched "${PROJECT_SOURCE_DIR}/build/cpython3.1[0-9]/usr/bin/python3.1[0-9]")
  strata_pyenv_pythons(pyenv)
  list(APPEND candidates ${fetched} ${pyenv})
  foreach(minor RANGE ${min} ${max})
    find_program(STRATA_USR_BIN_PYTHON3_${minor} python3.${minor} PATHS /usr/bin NO_DEFAULT_PATH)
    if(STRATA_USR_BIN_PYTHON3_${minor})
      list(APPEND candidates "${STRATA_USR_BIN_PYTHON3_${minor}}")
    endif()
  endforeach()
  set(entries "")
  set(paths "")
  foreach(py ${candidates})
    get_filename_component(py "${py}" REALPATH)
    if(py IN_LIST paths)
      continue()
    endif()
    strata_python_info(info "${py}")
    if(NOT info_FOUND OR info_MINOR LESS min OR info_MINOR GREATER max)
      continue()
    endif()
    list(APPEND paths "${py}")
    list(APPEND entries "${py}|${info_VERSION}|${info_MINOR}|${info_INCLUDE}")
  endforeach()
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()

# A test's name for one interpreter: PREFIX_py3MINOR for pyenv's, with "_debian_static" for
# Debian's own builds that scripts/debian-cpython.sh fetches, with the path made an identifier
# for any other (/usr/bin/python3.11 beside pyenv's 3.11). Sets OUT.
function(strata_python_test_name out prefix py minor)
  set(name ${prefix}_py3${minor})
  if(py MATCHES "^${PROJECT_SOURCE_DIR}/build/cpython")
    set(name "${name}_debian_static")
  elseif(NOT py MATCHES "pyenv")
    string(MAKE_C_IDENTIFIER "${py}" suffix)
    set(name "${name}${suffix}")
  endif()
  set(${out} "${name}" PARENT_SCOPE)
endfunction()

# For each entry of strata_find_cpythons whose minor is MIN..MAX and whose headers have
# internal/NEEDS (one per X.Y.Z): GENERATOR (a C file printing `VAR.field = N;` lines) built
# against them, run at build time into OUT_DIR/PREFIX_X_Y_Z.inc, and a C++ function
# `TYPE PREFIX_X_Y_Z()` including it. Sets PREFIX_functions (their definitions), PREFIX_calls
# ("PREFIX_X_Y_Z(), ..."), PREFIX_incs (the .inc files) and PREFIX_versions in the caller.
function(strata_offset_tables)
  cmake_parse_arguments(T "" "PREFIX;TYPE;VAR;GENERATOR;NEEDS;OUT_DIR;MIN;MAX;LABEL" "ENTRIES" ${ARGN})
  file(MAKE_DIRECTORY "${T_OUT_DIR}")
  set(functions "")
  set(calls "")
  set(incs "")
  set(versions "")
  foreach(entry ${T_ENTRIES})
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 1 ver)
    list(GET fields 2 minor)
    list(GET fields 3 inc)
    if(minor LESS T_MIN OR minor GREATER T_MAX OR ver IN_LIST versions OR NOT EXISTS "${inc}/internal/${T_NEEDS}")
      continue()
    endif()
    list(APPEND versions "${ver}")
    string(REPLACE "." "_" tag "${ver}")
    set(gen strata_${T_PREFIX}_gen_${tag})
    add_executable(${gen} ${T_GENERATOR})
    target_include_directories(${gen} SYSTEM PRIVATE "${inc}" "${inc}/internal")
    target_compile_options(${gen} PRIVATE -w)
    set(inc_file "${T_OUT_DIR}/${T_PREFIX}_${tag}.inc")
    add_custom_command(OUTPUT "${inc_file}" COMMAND ${gen} > "${inc_file}" DEPENDS ${gen} VERBATIM)
    list(APPEND incs "${inc_file}")
    string(APPEND functions
      "${T_TYPE} ${T_PREFIX}_${tag}() {\n  ${T_TYPE} ${T_VAR};\n#include \"${T_PREFIX}_${tag}.inc\"\n  return ${T_VAR};\n}\n")
    string(APPEND calls "${T_PREFIX}_${tag}(), ")
    message(STATUS "${T_LABEL} for CPython ${ver} (${inc})")
  endforeach()
  set(${T_PREFIX}_functions "${functions}" PARENT_SCOPE)
  set(${T_PREFIX}_calls "${calls}" PARENT_SCOPE)
  set(${T_PREFIX}_incs "${incs}" PARENT_SCOPE)
  set(${T_PREFIX}_versions "${versions}" PARENT_SCOPE)
endfunction()
