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
# ThreadSanitizer for the same targets, in a folder of its own (TSan and ASan
# exclude each other); run with test/Runtime/tsan.supp (docs/testing.md).
option(LMOPT_SANITIZE_THREAD
       "Build LmoptRuntime and its tests with ThreadSanitizer" OFF)
if(LMOPT_SANITIZE AND LMOPT_SANITIZE_THREAD)
  message(FATAL_ERROR "LMOPT_SANITIZE and LMOPT_SANITIZE_THREAD exclude each "
                      "other; configure one build folder for each")
endif()
# Empty unless one of the two is on; lib/Format and lib/Runtime add them.
set(LMOPT_SANITIZE_FLAGS)
if(LMOPT_SANITIZE)
  set(LMOPT_SANITIZE_FLAGS -fsanitize=address,undefined
      -fno-sanitize-recover=all -fno-omit-frame-pointer)
elseif(LMOPT_SANITIZE_THREAD)
  set(LMOPT_SANITIZE_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
endif()

# The Python package (python/, docs/python.md): AUTO builds it when Python's
# headers and nanobind are found, ON requires them, OFF skips it.
set(LMOPT_BUILD_PYTHON AUTO CACHE STRING "Build the Python package: AUTO, ON or OFF")
set_property(CACHE LMOPT_BUILD_PYTHON PROPERTY STRINGS AUTO ON OFF)
