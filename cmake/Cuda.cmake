# The CUDA side is compiled whenever nvcc is found (CUDA is installed on every project machine,
# GPU or not), so CUDA code always compiles and links in CI even where it cannot run.
#
# Architectures, one entry each:
#   90   Hopper (H100, H200, GH200): the GPUs we measure on.
#   100  Blackwell (B200, GB200): block-scaled mxfp8 / nvfp4 GEMMs need sm_100.
# Override with -DCMAKE_CUDA_ARCHITECTURES=... (for example 90 alone for a faster build).
set(UB_HAVE_CUDA OFF)
if(UB_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90 100)
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc 13's C++20 flag; tell it (nvcc 12+ supports it).
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(UB_HAVE_CUDA ON)
    message(STATUS "upgradebench: GPU side ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, archs ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    message(STATUS "upgradebench: nvcc not found, GPU side OFF (GPU commands will say so)")
  endif()
endif()
