// The reduction kernels built for the avx2 instruction set (compile flags in lib/meson.build).
#include "lib/combine_kernels.ipp"

#include "lib/combine_kernels.hpp"

namespace lanes::detail::kernels {

CombineFn avx2(Datatype type, Op op) {
  return kernel_for(type, op);
}

}  // namespace lanes::detail::kernels
