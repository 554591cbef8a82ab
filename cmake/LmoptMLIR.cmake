# Finds LLVM/MLIR 22 (Debian: /usr/lib/llvm-22) and loads MLIR's CMake helpers.

if(NOT MLIR_DIR AND EXISTS "/usr/lib/llvm-22/lib/cmake/mlir")
  set(MLIR_DIR "/usr/lib/llvm-22/lib/cmake/mlir")
endif()
# MLIR's config only accepts an exact version request, so check the major here.
find_package(MLIR REQUIRED CONFIG)
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "lmopt needs LLVM/MLIR 22, found ${LLVM_PACKAGE_VERSION} at ${MLIR_DIR}")
endif()
message(STATUS "Using MLIRConfig.cmake in: ${MLIR_DIR}")
message(STATUS "Using LLVMConfig.cmake in: ${LLVM_DIR}")

set(LLVM_RUNTIME_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/bin)
set(LLVM_LIBRARY_OUTPUT_INTDIR ${CMAKE_BINARY_DIR}/lib)
set(MLIR_BINARY_DIR ${CMAKE_BINARY_DIR})

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)
include(HandleLLVMOptions)

# Debian ships libLLVM.so and libMLIR.so. Linking the shared MLIR keeps every tool
# link to a few seconds on two cores; libraries therefore name their MLIR
# dependencies through mlir_target_link_libraries(), never LINK_LIBS.
set(MLIR_LINK_MLIR_DYLIB ON)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
include_directories(${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include)
link_directories(${LLVM_BUILD_LIBRARY_DIR})
separate_arguments(LMOPT_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
add_definitions(${LMOPT_LLVM_DEFINITIONS})

# lit comes with llvm-22-tools; the LLVM build tree's llvm-lit does not exist here.
if(NOT LLVM_EXTERNAL_LIT)
  find_program(LMOPT_LIT NAMES lit llvm-lit HINTS ${LLVM_TOOLS_BINARY_DIR}
               NO_DEFAULT_PATH REQUIRED)
  set(LLVM_EXTERNAL_LIT "${LMOPT_LIT}" CACHE STRING "Command used to spawn lit" FORCE)
endif()

set(LMOPT_SOURCE_DIR ${PROJECT_SOURCE_DIR})
set(LMOPT_BINARY_DIR ${PROJECT_BINARY_DIR})
set(LMOPT_TOOLS_DIR ${CMAKE_BINARY_DIR}/bin)

