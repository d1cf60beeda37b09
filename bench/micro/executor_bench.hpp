// Per-operation cost of lanes' collectives with tiny data: the API, selection (cached per call
// shape), schedule lookup and the executor, in a single-process runtime and between two
// runtimes on two threads of this process (one node: shared-memory channels; two emulated
// nodes: UCX over loopback). Rails default to lo and, for the two-thread runtimes, progress to
// yield (LANES_RAILS, LANES_PROGRESS override).
#pragma once

namespace lanes_micro {

// Destroys the runtimes the executor benchmarks created (collective with their helper threads).
void stop_runtimes();

}  // namespace lanes_micro
