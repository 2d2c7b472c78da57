# Installing Strata: `cmake --install BUILD --prefix PREFIX [--strip]` lays out
#   PREFIX/bin/strata-dap, PREFIX/bin/strata
#   PREFIX/lib/strata/strata-engine       the ptrace engine strata-dap starts for each native program
#   PREFIX/lib/strata/python/strata/      the Python agent, its core built for each CPython found
#   PREFIX/lib/strata/libstrata_cupti.so  the GPU collector, with the libcupti it was built with
#   PREFIX/lib/strata/deps/               the shared libraries the two programs load, except the C
#                                         library's own
#   PREFIX/share/doc/strata/              README.md
# The tree is relocatable: the programs find their libraries through an RPATH relative to
# themselves ($ORIGIN/../lib/strata/deps; DT_RPATH, so the carried libraries' own dependencies
# are found there too), and strata-dap finds its agent and collector from its own location
# (agentPythonPath, locateCollector). CPack builds a .deb and a .tar.gz of the same tree
# (scripts/package.sh); the wheel carries it too (scripts/build-wheel.py).

set(strata_install_libdir "lib/strata")

set_target_properties(strata-dap strata PROPERTIES INSTALL_RPATH "\$ORIGIN/../${strata_install_libdir}/deps")
target_link_options(strata-dap PRIVATE -Wl,--disable-new-dtags)
target_link_options(strata PRIVATE -Wl,--disable-new-dtags)
install(TARGETS strata-dap strata RUNTIME_DEPENDENCY_SET strata_runtime_libraries
  RUNTIME DESTINATION bin COMPONENT strata)
set_target_properties(strata-engine PROPERTIES INSTALL_RPATH "\$ORIGIN/deps")
target_link_options(strata-engine PRIVATE -Wl,--disable-new-dtags)
install(TARGETS strata-engine RUNTIME_DEPENDENCY_SET strata_runtime_libraries
  RUNTIME DESTINATION "${strata_install_libdir}" COMPONENT strata)
# glibc's own libraries come from the machine (the programs need its 2.36 or newer); everything
# else they link is carried.
install(RUNTIME_DEPENDENCY_SET strata_runtime_libraries
  DESTINATION "${strata_install_libdir}/deps" COMPONENT strata
  PRE_EXCLUDE_REGEXES "^ld-linux" "^linux-vdso" "^libc\\.so" "^libm\\.so" "^libpthread\\.so" "^libdl\\.so"
                      "^librt\\.so" "^libresolv\\.so" "^libutil\\.so")

# The agent as the build laid it out (sources, bytecode, the cores), the same tree the adapter
# uses from the build directory.
install(DIRECTORY "${PROJECT_BINARY_DIR}/backends/python/python/strata"
  DESTINATION "${strata_install_libdir}/python" COMPONENT strata
  USE_SOURCE_PERMISSIONS)
# --strip (and the packages) strip the cores' debug information as they do the programs'.
install(CODE "
  if(CMAKE_INSTALL_DO_STRIP)
    file(GLOB cores \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${strata_install_libdir}/python/strata/*.so\")
    foreach(core \${cores})
      execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug \"\${core}\")
    endforeach()
  endif()" COMPONENT strata)

if(TARGET strata_cupti)
  install(TARGETS strata_cupti LIBRARY DESTINATION "${strata_install_libdir}" COMPONENT strata)
  # The collector's version gate wants the CUPTI it was built with; it looks beside itself first.
  file(GLOB strata_cupti_libraries "${STRATA_CUPTI_DIR}/libcupti.so.[0-9][0-9]")
  if(strata_cupti_libraries)
    install(FILES ${strata_cupti_libraries} DESTINATION "${strata_install_libdir}" COMPONENT strata)
  endif()
endif()

install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION share/doc/strata COMPONENT strata)

# --- packages ---------------------------------------------------------------------------------
set(CPACK_PACKAGE_NAME "strata")
set(CPACK_PACKAGE_VENDOR "Strata")
set(CPACK_PACKAGE_CONTACT "Strata <strata@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Debugger for Python, C/C++ and CUDA programs in one DAP session")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_FILE_NAME "strata-${PROJECT_VERSION}-linux-x86_64")
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "amd64")
set(CPACK_DEBIAN_FILE_NAME "strata_${PROJECT_VERSION}_amd64.deb")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
# The libraries are carried (lib/strata/deps); only the C library comes from the system.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.36)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3")
set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/packages")
include(CPack)
