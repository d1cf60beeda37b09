#include "lib/combine_kernels.hpp"

namespace lanes::detail::kernels {

const char* to_string(Isa isa) {
  switch (isa) {
    case Isa::baseline:
      return "baseline";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "unknown";
}

bool supported(Isa isa) {
  switch (isa) {
    case Isa::baseline:
      return true;
    case Isa::avx2:
#ifdef LANES_KERNELS_AVX2
      return __builtin_cpu_supports("avx2") != 0;
#else
      return false;
#endif
    case Isa::avx512:
#ifdef LANES_KERNELS_AVX512
      return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0 &&
             __builtin_cpu_supports("avx512dq") != 0 && __builtin_cpu_supports("avx512vl") != 0;
#else
      return false;
#endif
  }
  return false;
}

Isa widest_supported() {
  if (supported(Isa::avx512)) return Isa::avx512;
  if (supported(Isa::avx2)) return Isa::avx2;
  return Isa::baseline;
}

CombineFn for_isa(Isa isa, Datatype type, Op op) {
  switch (isa) {
    case Isa::avx512:
#ifdef LANES_KERNELS_AVX512
      return avx512(type, op);
#else
      break;
#endif
    case Isa::avx2:
#ifdef LANES_KERNELS_AVX2
      return avx2(type, op);
#else
      break;
#endif
    case Isa::baseline:
      break;
  }
  return baseline(type, op);
}

}  // namespace lanes::detail::kernels
