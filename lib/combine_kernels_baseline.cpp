// The reduction kernels built for the target's baseline instruction set (every x86-64 runs them).
#include "lib/combine_kernels.ipp"

#include "lib/combine_kernels.hpp"

namespace lanes::detail::kernels {

CombineFn baseline(Datatype type, Op op) {
  return kernel_for(type, op);
}

}  // namespace lanes::detail::kernels
