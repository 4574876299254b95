# The CUDA side is compiled whenever nvcc is found (CUDA is installed on every project machine,
# GPU or not), so CUDA code always compiles and links in CI even where it cannot run.
#
# Architectures, machine code for every NVIDIA data-centre GPU CUDA 13 supports, and PTX of the
# newest so a later GPU can compile it at load time:
#   80   Ampere (A100; its code also runs on 8.6 parts)
#   89   Ada (L40S, L4): fp8 GEMMs
#   90   Hopper (H100, H200, GH200): the GPUs we measure on; the bulk-copy bandwidth kernel
#   100  Blackwell (B200, GB200): block-scaled mxfp8 / nvfp4 GEMMs
#   103  Blackwell Ultra (B300, GB300)
#   120  RTX PRO Blackwell, and its PTX
# Each adds little: the 11 kernel files took 119.7 s for all six against 92.8 s for 90 and 100
# with PTX of both (one core, nvcc 13.0, 2026-12-05). Override with
# -DCMAKE_CUDA_ARCHITECTURES=... (for example 90 alone for a faster build); every GPU command
# checks at start that the build holds code for its GPU (cli/fatbin_architectures.hpp).
set(UB_DEFAULT_CUDA_ARCHITECTURES 80-real 89-real 90-real 100-real 103-real 120)
set(UB_HAVE_CUDA OFF)
if(UB_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES ${UB_DEFAULT_CUDA_ARCHITECTURES})
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
