// dnnp_int.cuh: the kernels' fixed-width integer types. Under nvcc they come from <cstdint>;
// under NVRTC (the run-time compile of the modules off the bundled cubins' architecture), which
// ships no C++ standard library headers, they are the builtin types of the same widths (the
// device ABI: int 32 bits, long long 64 bits).
#pragma once

#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <cstdint>
#endif
