# Build options and toolchain conveniences; kept out of the top-level file.

option(LMOPT_USE_CCACHE "Use ccache for compilation when it is installed" ON)
if(LMOPT_USE_CCACHE)
  find_program(LMOPT_CCACHE_PROGRAM ccache)
  if(LMOPT_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER "${LMOPT_CCACHE_PROGRAM}")
    set(CMAKE_C_COMPILER_LAUNCHER "${LMOPT_CCACHE_PROGRAM}")
  endif()
endif()

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type" FORCE)
endif()

# Every tool lands in build/bin, every library in build/lib.
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bin")
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib")
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/lib")

# AddressSanitizer and UndefinedBehaviorSanitizer for the runtime library and
# its unit tests; use a separate build folder (docs/bundle-format.md).
option(LMOPT_SANITIZE "Build LmoptRuntime and its tests with ASan and UBSan" OFF)
set(LMOPT_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer)

# The Python package (python/, docs/python.md): AUTO builds it when Python's
# headers and nanobind are found, ON requires them, OFF skips it.
set(LMOPT_BUILD_PYTHON AUTO CACHE STRING "Build the Python package: AUTO, ON or OFF")
set_property(CACHE LMOPT_BUILD_PYTHON PROPERTY STRINGS AUTO ON OFF)
