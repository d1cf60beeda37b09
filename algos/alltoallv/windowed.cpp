// Windowed pairwise alltoallv: the multi-lane form.
//
// Source: the pairwise exchange of MPICH's MPIR_Alltoallv_intra_scattered (a bounded number of
// outstanding requests; R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 19(1), 2005) and J. L.
// Traeff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms", for why a node's k
// lanes need k flows at all times; as alltoall/windowed.cpp, with blocks of per-pair sizes.
//
// Phases: the pairwise steps of alltoallv/pairwise.cpp, step s starting once step s - W has
// completed, W = min(p - 1, 2k) for k lanes, so that W messages are in flight and every lane of
// a node stays busy; each off-node message goes over all the lanes its sender drives (striped
// where it drives several). Empty blocks travel as empty messages.
//
// Cost: every block travels once; off the node, a node's blocks over its combined lane rate plus
// ceil((p - 1) / W) message start-ups.
//
// Applies: any p and any layout; for large blocks on several nodes. Local.
#include <algorithm>

#include "algos/alltoallv/steps.hpp"
#include "algos/vcollectives.hpp"

namespace lanes::algos {

Schedule build_alltoallv_windowed(const Layout& layout, const VArgs& args) {
  check_vargs(layout, args, "windowed");
  const int window = std::max(1, std::min(layout.size - 1, 2 * layout.num_lanes));
  return alltoallv_steps(layout, args, window);
}

const VAlgorithm valgorithm_alltoallv_windowed{
    "windowed", VCollective::alltoallv, build_alltoallv_windowed, true,
    "pairwise steps with 2k in flight, so every lane of a node stays busy"};

}  // namespace lanes::algos
