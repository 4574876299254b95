// Inputs of a collective crafted so that its exact output is known, and the count of output
// elements that differ from it (nccl-tests' #wrong): element i of rank r holds
// value(r, i) = ((7 i + 3 r) mod 5) - 2, a small integer, so every sum of up to 128 ranks is exact
// in bf16, fp16 and fp32, and of up to 8 ranks in fp8 e4m3 (beyond 8 ranks fp8 uses the sign of
// it, exact up to 16). The comparison is exact; a NaN is always wrong.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "facts/collectives.hpp"
#include "gpu/elem.hpp"

namespace ub::gpu {

// Fills `count` elements of `p` with rank `rank`'s values value(rank, 0 .. count - 1) (`world`
// chooses fp8's pattern).
void fill_collective_input(void* p, Elem e, size_t count, int rank, int world, cudaStream_t s);

// Adds to *wrong the number of elements of `out` (what `c` leaves on `rank`: `recv` elements, each
// rank's part `part` elements) that are not exactly what it must be. Sums for all_reduce,
// reduce_scatter and reduce (its root; other ranks' outputs are not checked); the root's data for
// broadcast; the ring neighbour rank - 1's for sendrecv.
void count_collective_mismatches(const void* out, Elem e, Collective c, size_t recv, size_t part, int rank, int world,
                                 int root, unsigned long long* wrong, cudaStream_t s);

}  // namespace ub::gpu
