#include "algos/common.hpp"

#include <lanes/error.hpp>
#include <string>

namespace lanes::algos {

int ceil_log2(int p) {
  int r = 0;
  while ((1LL << r) < p) ++r;
  return r;
}

int floor_log2(int x) {
  int r = 0;
  while ((x >> (r + 1)) > 0) ++r;
  return r;
}

VectorPart vector_part(std::size_t bytes, std::size_t elem, int parts, int i) {
  const std::size_t n = bytes / elem;
  const auto k = static_cast<std::size_t>(parts);
  const auto at = static_cast<std::size_t>(i);
  const auto first = [&](std::size_t j) { return j * (n / k) + std::min(j, n % k); };
  return {first(at) * elem, (first(at + 1) - first(at)) * elem};
}

bool regular_layout(const Layout& layout) {
  return layout.regular();
}

void check_args(const Layout& layout, const CollArgs& args, std::string_view algorithm,
                bool rooted) {
  const int p = layout.size;
  const bool bad_rank = args.rank < 0 || args.rank >= p;
  const bool bad_root = rooted && (args.root < 0 || args.root >= p);
  if (bad_rank || bad_root) {
    throw Error(Errc::invalid_argument,
                std::string(to_string(args.coll)) + " " + std::string(algorithm) + ": rank " +
                    std::to_string(args.rank) +
                    (rooted ? " or root " + std::to_string(args.root) : std::string()) +
                    " outside 0.." + std::to_string(p - 1));
  }
}

}  // namespace lanes::algos
