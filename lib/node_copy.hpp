// Which of a schedule's node messages go single-copy (CMA) where the node allows it, and who
// copies them (transport::SingleCopy): one hint per schedule and rank, which the executor passes
// with every node send. Single copy moves each byte once instead of twice through the staged
// chunks, from above a whole slot message:
//  - pulled, where the rank's core has other copying to do meanwhile: it sends on its node while
//    it receives there (a send that waits for no on-node receive, and an on-node receive:
//    alltoall, allgather, a reduction's exchanges and full-lane node phases), or, in a schedule
//    that combines nothing, it sends to several local peers, or copies locally and receives
//    nothing on its node (scatter's root, a bcast tree's root): each receiver reads its own
//    message; and, where processes share cores, a rank that only sends on its node (a gather's
//    leaves), whose messages the channels then stage up to kSharedCoresSlowStagedMax where the
//    kernel's copy is slow;
//  - balanced, for such a root whose one local peer is its only one and that has no off-node
//    sends, whose local copy is as large as what it sends (scatter's root between two ranks):
//    pulled where the kernel's copy is as fast as memcpy or the message is below
//    transport::kSharedPushMin, else the root writes the share that has both finish together
//    (AMD EPYC, s = 3.4, lanes-bench --collective scatter --impl lanes, three alternating
//    rounds, medians: 400 KB 19.6-20.7 us against 28.2-34.2 pulled, 4 MB 220-232 against
//    348-384, 8 MB 464-536 against 1000-1079; 80 KB alike), and from transport::kSharedSplitMin
//    both claim pieces of it;
//  - shared, in the other schedules that combine nothing (bcast and gather between two ranks, a
//    gather tree's relays): sender and receiver each copy half (below
//    transport::kSharedPushMin the receiver all of it);
//  - exchange, the pulled case whose every node send waits for no receive (alltoall): where
//    processes share cores, pulled from above a whole slot message too;
//  - no (staged), in the other reductions, in every reduction whose vectors exceed
//    kPulledReductionMax where each process has a core, and there in every reduce (as
//    pipelined, which keeps a reduce's large messages staged from the shared heap too): its
//    receivers combine the staged pieces straight out of the slots as they arrive
//    (lib/fused_receive.hpp), so a message costs its sender one copy and its receiver none.
//    Measured at p=2, a core each, three rounds alternating with the build before (shared single
//    copy for a sender that combines nothing, staged beyond 6 MiB; lanes-bench --collective
//    reduce --algorithms auto, which takes binomial, whose root now also combines its first
//    child's vector with its own input rather than with a copy of it), medians: 40 KB 4.8-5.5 us
//    against 9.8-10.3, 120 KB 10.6 against 18.2-21.2, 4 MB 480-530 against 681-711, 16 MB 1977-2044
//    against 3494-3635. An allreduce keeps the old rule: its allgather's messages, which nobody
//    combines, cost two copies staged, and its 4 MB full-lane was the slower so (medians 865-1374
//    us against 741-809 in two runs alternating an experimental build that staged every
//    reduction's node messages, lanes-bench --collective reduce,allreduce --counts
//    10000,30000,100000,1000000 --reps 300).
// Where processes share cores, the channels otherwise share every single copy, above the chunk
// only (NodeChannels::send).
// Measured with a process per core (lanes-bench, alternating builds): at p=2, alltoall and
// allgather of 64-128 KiB blocks 1.40-1.52x faster than staged, scatter of 1 MiB 1.66x; bcast,
// scatter and gather at 1-16 MiB single-copy faster than staged in 28 of 30 pairs (LANES_CMA=0
// against 1 by turns).
#pragma once

#include <cstddef>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"
#include "transport/shm/channels.hpp"

namespace lanes::detail {

// Above this vector size a reduction's node messages go staged, not pulled, where each process
// has a core. Its vectors then stream from memory, and the kernel's page-by-page copy of a peer's
// vector (process_vm_readv) ran at a third of memcpy's rate here (lanes-micro copy/cma-read
// against copy/memcpy at 16 MiB: 3.7 against 10 GB/s), while staging has each process stream its
// own vector into the segment, from where the receiver takes it chunk by chunk while it is in
// cache. Measured with a process per core, p=2, lanes-bench --collective allreduce,reduce
// --counts 1000000,2000000,3000000, LANES_CMA=0 against auto in turns: pulled faster at 4 MB
// (allreduce 742-793 us against 945-1237), staged at 8 MB (reduce 1530-1539 us against
// 1806-2143) and 12 MB (allreduce 3257-4084 us against 5681-7323). Against the build before,
// three alternating rounds: allreduce of 16 MB 4137-4486 us against 5037-5648, reduce of 8 MB
// 1455-1639 against 1751-2263. On an Intel Xeon whose ratio is 1.7-2.4 (best of 40 or 8 rounds),
// staged won again from 5.6 MB (allreduce, three rounds alternating LANES_CMA_SLOWDOWN=1.5 and 3:
// medians 885-961 us staged against 962-1162 pulled), so 4 MiB.
inline constexpr std::size_t kPulledReductionMax = std::size_t{4} << 20;
// Up to this vector size too a reduction's node messages go staged: the receiver combines the
// pieces straight out of the slots, in cache, where a pulled message is first copied whole. On
// that Xeon, the same rounds, medians staged against pulled: 40 KB 6.35-8.31 us against
// 9.52-9.85, 120 KB 13.8-14.1 against 19.8-20.7, 400 KB 40.3-41.1 against 43.6-50.4, 1 MB 134-158
// against 128-170, 1.6 MB 228-261 against 231-291, 2 MB 297-325 against 290-358; pulled won from
// 3 MB (407-483 us against 458-512) to 4 MB (563-668 against 648-699).
inline constexpr std::size_t kPulledReductionMin = std::size_t{2} << 20;

// Between the two, too, a reduction's node messages go staged where each process has a core and
// the kernel's copy of a peer's pages (process_vm_readv) takes this many times memcpy's time or
// more, as probed at start-up (transport::cma_slowdown). At p=2 a pulled full-lane allreduce costs
// each rank two single copies of half the vector, a staged one three memcpys of it (one into the
// segment for the reduce-scatter, whose receiver combines straight out of the slots; one in and
// one out for the allgather): staging wins from a slowdown of 1.5 in that count, the threshold.
// The probe's megabyte does not tell the machines apart further: an Intel Xeon whose ratio was
// 1.7-2.4 pulled 3-4 MB vectors 10-15 % faster (medians 407-483 us against 458-512 at 3 MB,
// 563-668 against 648-699 at 4 MB), where an AMD EPYC whose ratio is 2.2 stages them 2.2-2.6x
// faster (allreduce, lanes-bench --algorithms auto, LANES_CMA_SLOWDOWN=1.5 and 3 by turns, two
// rounds, medians: 2.4 MB 174-179 us against 398-432, 3.2 MB 205-211 against 542-568, 4.2 MB 280
// against 685-729). The count's threshold costs the one a little where a higher one (2.5, before)
// left the other's 4 MB allreduce slower than Open MPI's (760-1003 us against 744-846).
inline constexpr double kPullReductionSlowdownMax = 1.5;

// Whether `rank` has copies of its own to make while it receives on its node (a gather's root
// copying its own block): its large shared receives then go by claimed pieces
// (transport::kSharedSplitMin), so that their senders copy more of them. Measured at p=2, a core
// each, gather of 4 MB: averages 332-335 us against 462-478 with the halves fixed in advance,
// medians 326-327 against 458-470 (lanes-bench --collective bcast,scatter,gather,alltoall,allgather
// --counts 262144,1000000 --algorithms auto, two rounds alternating).
bool node_receiver_busy(const algos::Schedule& schedule, const algos::Layout& layout, int rank);

// The largest extent a schedule uses of the caller's send or receive buffer: its vector.
std::size_t user_bytes(const algos::Schedule& schedule);

// The hint of `rank`'s schedule; `cma`: this node prefers single copy for every large message
// (its processes share cores); `reduce`: the schedule is a reduce's; `cma_slowdown`: as probed
// (0: not known, taken as fast enough).
transport::SingleCopy node_copy_of(const algos::Schedule& schedule, const algos::Layout& layout,
                                   int rank, bool cma, bool reduce, double cma_slowdown);

}  // namespace lanes::detail
