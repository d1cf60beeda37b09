// The predefined reductions' kernels, compiled once per instruction set: the same plain loops
// (combine_kernels.ipp) built for x86-64's baseline, for AVX2 and for AVX-512, where the compiler
// and the target allow. combine_fn() calls the widest the CPU runs; the variants compute the same
// bits (every operation is element by element, in one order), which unit/combine checks.
#pragma once

#include "lib/combine.hpp"

namespace lanes::detail::kernels {

enum class Isa { baseline, avx2, avx512 };

const char* to_string(Isa isa);
// The widest instruction set both built into this library and run by this CPU.
Isa widest_supported();
// Whether kernels for `isa` are built and this CPU runs them.
bool supported(Isa isa);
// The kernel of `isa` (supported(isa) required); nullptr where the operation does not apply.
CombineFn for_isa(Isa isa, Datatype type, Op op);

// One per compiled instruction set (combine_kernels_*.cpp).
CombineFn baseline(Datatype type, Op op);
CombineFn avx2(Datatype type, Op op);
CombineFn avx512(Datatype type, Op op);

}  // namespace lanes::detail::kernels
