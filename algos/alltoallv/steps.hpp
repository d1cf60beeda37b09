// The pairwise steps of alltoallv, with `window` steps in flight (1: one at a time), shared by
// alltoallv/pairwise.cpp and alltoallv/windowed.cpp.
#pragma once

#include "algos/layout.hpp"
#include "algos/schedule.hpp"
#include "algos/vcollectives.hpp"

namespace lanes::algos {

Schedule alltoallv_steps(const Layout& layout, const VArgs& args, int window);

}  // namespace lanes::algos
