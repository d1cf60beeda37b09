// Point-to-point channels between the processes of one node, inside the node's shared-memory
// segment. Every ordered pair of local ranks has a ring of `slots` message slots (8 on small
// nodes, down to 2 on large ones); message m of a pair uses slot m % slots. Three protocols,
// chosen per message:
//   inline  (bytes <= chunk): the sender copies into the slot and is done (eager);
//   cma     (larger, when the node allows process_vm_readv/writev): both sides publish their
//           buffer addresses; the sender pushes the first part straight into the receiver's
//           buffer while the receiver pulls the rest (or both claim pieces of it, from
//           kSharedSplitMin where one side is busy): one copy, done by two cores;
//   staged  (larger): the message streams through the slot's two chunk buffers.
// The sender chooses between cma and staged (its CopyPolicy, or a hint per message) and records
// the choice in the slot; the receiver follows it.
// Every flag holds a message number + 1, so a stale value never passes for a new message.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/shm/heap.hpp"
#include "transport/shm/segment.hpp"
#include "transport/xfer.hpp"

namespace lanes::transport {

// What the caller knows of a node send's call, which decides whether it goes single-copy (CMA,
// where the node allows it) and who copies. A hinted message goes single-copy from
// NodeChannels::single_copy_min() bytes:
//  - no: staged, unless this process prefers single copy for every message above the chunk;
//  - shared: the sender writes NodeChannels::push_bytes() of it, the receiver reads the rest, so
//    both copy at once: for a call whose sender has nothing else to copy meanwhile (bcast and
//    gather between two ranks; p=2, a core each, bcast 64 KiB: 5.7-6.1 us against 6.7-7.6 us
//    staged); pulled below kSharedPushMin where each process has a core;
//  - pulled: the receiver reads all of it and the sender copies nothing: for exchanges
//    (alltoall, allgather, a reduction's exchange steps), whose every core copies its own
//    receives anyway, and senders busy with other copies (scatter's root of several) (p=2, alltoall
//    64 KiB: 7.3 us against 11.2 us staged and 11-13 us shared);
//  - exchange: pulled, for a rank that sends all its node messages at once before it receives
//    any (alltoall): where processes share cores, from above kWholeMax rather than above the
//    chunk, since such a sender waits for its receives anyway and the copy it saves is core time
//    the others need (4 processes on 2 cores, alltoall of 40-64 KB blocks 1.15-2.2x faster than
//    staged in three runs of three rounds alternating the builds, lanes-bench --counts
//    10000,16000; recursive-doubling allgather, whose later sends wait for receives, 0.73-0.86x,
//    so it stays staged there);
//  - balanced: pulled for a sender whose other work meanwhile is one local copy as large as this
//    message (scatter's root between two ranks), except where the kernel's copy takes s > 1
//    times memcpy's time (NodeChannels::cma_slowdown()): then the sender writes the share
//    (1 - 1/s)/2 of it itself (NodeChannels::balanced_push_bytes()), which has both finish
//    together, the sender after its memcpy and its share, the receiver after the rest (AMD EPYC,
//    s = 3.4, p=2, scatter of 4 MB: pushing 25 %, 33 % and 50 % against pulling, in two
//    alternating rounds, averages 292-321, 266-271 and 350-356 us against 355-397);
//  - pipelined: no, for a sender that has nothing else to do meanwhile (a reduce's senders, whose
//    receivers combine the pieces as they arrive): its message stays staged from the heap too
//    from kMappedPipelinedMin where each process has a core, so that its core copies while the
//    receiver combines (see kMappedPipelinedMin);
//  - fanout: pulled, also where processes share cores, for a sender that feeds several local peers
//    and receives nothing on its node (scatter's root, a bcast tree's root): each receiver reads
//    its own message while the sender goes on to the next (4 processes on 2 cores, scatter
//    medians in two rounds: 400 KB blocks 67-72 us against 123-131 with the sender writing half
//    of each, 1.2 MB 169-241 against 224-275).
enum class SingleCopy : std::uint8_t { no, shared, pulled, exchange, balanced, fanout, pipelined };

struct CopyPolicy {
  bool single_possible = false;  // try single copy (the probe may still find it fails)
  bool prefer_single = false;    // every large message single-copy, not only those hinted
  double cma_slowdown = 0;       // single copy's time over memcpy's as probed (0: not known)
  double cma_page_seconds = 0;   // a single copy's time for one page as probed (0: not known)
};

struct ChannelGeometry {
  int local_size = 1;
  int slots = 8;
  std::size_t chunk = 32 * 1024;  // inline limit and staged chunk size
  int push_percent = 50;          // share of a CMA message the sender writes itself
};

// How a staged message crosses its slot, whose buffer holds two chunks. Up to kWholeMax bytes (or
// the chunk, where that is smaller) it goes whole: the sender copies it in, then the receiver
// copies it out. A larger one goes in pieces through a ring of pieces in that buffer, so that
// the receiver copies piece c out while the sender copies piece c + 1 in: one copy's time plus
// one piece's, rather than two copies' time (pieces of about a quarter of a message up to a
// chunk; pieces of a chunk, two in the buffer, beyond). Sender and receiver compute it alike
// from the size.
inline constexpr std::size_t kWholeMax = 16 * 1024;

// Where each process has a core, a hinted message above this size goes single-copy where the
// kernel's copy is fast (below kSlowSingleCopyRatio), an exchange's too: a whole staged message
// costs two copies one after the other, and on an Intel Xeon (ratio 1.7-2.4) a 16 KB one took
// about 3.5 us (a bcast's median), far more than two in-cache memcpys. There, p=2, two rounds
// alternating 16 KiB + 1 and 4 KiB + 1 as the least (lanes-bench --algorithms auto --reps 2000,
// medians): 16 KB bcast 1.73-1.85 us against 3.49-3.51, gather 2.33-2.38 against 3.26-3.28,
// alltoall 2.48-2.58 against 2.91-2.98, allgather 2.24-2.31 against 2.98-3.12; 8 KB bcast
// 1.24-1.39 against 1.75-2.03; 6 KB alike (alltoall, allgather) or faster (bcast 1.21-1.41 against
// 1.37-1.65).
inline constexpr std::size_t kSingleCopyMin = 4 * 1024;

// From this size a message whose source lies in its sender's heap (SharedHeap) goes single-copy
// whatever the hint: its receiver reads it with memcpy out of its mapping of that heap, or
// combines it from there (a reduction's fused receive), rather than have it staged through the
// slot in two copies. p=2 on an Intel Xeon, buffers from the heap, two rounds alternating a
// least size of 256 B and 4 KiB (lanes-bench --memory shared --algorithms auto --reps 2000,
// medians): 1 and 2 KiB read in place 0.53-0.61 us against 0.71-1.32 staged for bcast,
// alltoall, allreduce and reduce; 512 B alike (0.48-0.58 against 0.49-0.68), 256 B staged
// slightly faster for allreduce (0.42-0.47 against 0.57-0.58). From 4 to 32 KiB in place as fast
// as the kernel's copy for the collectives that combine nothing, and faster for the reductions
// (allreduce of 8 KiB 1.60-1.64 us against 2.11-2.25, reduce of 16 KiB 0.77-0.78 against
// 2.54-2.70, fastest calls).
inline constexpr std::size_t kMappedMin = 1024;
// From this size, where each process has a core, a message hinted SingleCopy::pipelined goes
// staged even from the sender's heap: read in place, the receiver alone streams both vectors
// while the sender's core idles; staged, the sender copies each piece in while the receiver
// combines the one before. p=2 on an Intel Xeon, reduce from the heap, two rounds alternating
// staged and read in place (lanes-bench --memory shared --collective reduce --algorithms auto,
// medians): read in place 1.03-1.16 us against 3.46-3.52 at 16 KiB, 7.3-7.4 against 17.9-18.2
// at 256 KiB, 16.4-16.6 against 41.3-41.9 at 512 KiB; alike at 1 MiB (94-105 against 90-97);
// staged faster at 2 MiB (195-206 against 221-229) and 4 MiB (385-390 against 448-454).
inline constexpr std::size_t kMappedPipelinedMin = 1024 * 1024;

// Where each process has a core, a shared or balanced single-copy message below this size goes
// pulled: the receiver reads all of it while the sender waits. The sender's share costs it a
// wait for the receiver's address and a system call of its own, which half of a small copy does
// not repay. p=2, two or more rounds each (bench/preload_sweep.sh: the average over both ranks):
// bcast of 16 KiB 1.52-1.55 us pulled against 1.83-1.86 shared (Open MPI 1.53-1.61), scatter
// 1.56-1.62 against 1.91-1.94; bcast of 64 KiB 3.43-3.46 against 2.86-2.92. The slowest rank's
// time (lanes-bench --algorithms auto, medians, two rounds): bcast of 16 KB 1.70-1.82 against
// 1.83-2.21, 8 KB alike; 24 and 32 KB shared faster (bcast 1.99-2.10 us against 2.12-2.23, and
// 2.27-2.34 against 2.35-2.72).
inline constexpr std::size_t kSharedPushMin = 20 * 1024;

// Where each process has a core, a shared message from this size on whose sender (a balanced
// hint: a scatter's root, which copies its own block too) or receiver (NodeChannels::recv's
// `busy`: a gather's root) has copies of its own to make is not split in advance: sender and
// receiver claim pieces of about a sixteenth of it, the sender from the front and the receiver
// from the back, until none is left, so that the side that is free copies more; a busy side
// claims from its second poll of the message on, once the caller's own copies ran. p=2, two
// rounds alternating with the split in advance (lanes-bench --algorithms auto, averages): gather
// of 4 MB 332-335 us against 462-478, of 1 MB 50-56 against 98-101; scatter 331-335 against 361-365
// and 53-55 against 64-67; at 400 KB pieces were slower for the scatter (medians 15.2 against
// 13.1-13.8 us), so 1 MiB. Messages whose two sides are alike (a bcast's) keep the halves:
// pieces of a sixteenth, an eighth or a quarter of a 4 MB bcast took 167-204 us (medians)
// against 167-169.
inline constexpr std::size_t kSharedSplitMin = 1024 * 1024;

// Where each process has a core and the kernel's copy of a peer's pages takes this many times
// memcpy's time or more (the node's probed ratio, NodeChannels::cma_slowdown()), messages up to
// kSlowSingleCopyStagedMax go staged whatever the hint: the pipelined staged copy's two memcpys,
// one per core, beat one slow kernel copy there. Measured on an AMD EPYC whose ratio was 2.4-4.4,
// p=2, LANES_CMA=0 against auto by turns (lanes-bench --algorithms auto): 40 KB blocks staged
// 1.3-1.9x faster (medians) for bcast, scatter, gather, alltoall and allgather; 64 KB staged
// 1.1-1.4x faster (averages) except alltoall (0.94x); 128 KB single copy 1.1-1.4x faster for
// alltoall and allgather, staged 1.2-1.3x for bcast and scatter; from 400 KB single copy as fast
// or faster. On an Intel Xeon whose ratio is 2.0-2.2 single copy wins instead: p=2, three rounds
// alternating LANES_CMA_SLOWDOWN=1.5 and 3 (lanes-bench --algorithms auto --counts
// 5000,10000,16000), medians of 20-64 KB blocks 1.3-2.1x lower single-copy for every one of the
// five collectives (bcast of 40 KB 2.40-2.52 us against 4.90-5.03); with 4 processes on the 2
// cores (40-200 KB, two rounds) single copy was faster in 24 of 30 cells. Hence 2.5: above the
// Xeon, below the EPYC's usual 3.4. The ratio of a megabyte's copies only stands in for what
// decides (a staged message crosses between the cores' caches, a single copy pins pages): an
// EPYC start-up that finds below 2.5 (2.0 was seen there) would send these messages single-copy,
// 1.3-1.9x slower there, but for the kernel's cost per page below, which such EPYCs show and the
// Xeon does not; timing both paths between the processes at start-up would settle it per
// machine.
inline constexpr double kSlowSingleCopyRatio = 2.5;
inline constexpr std::size_t kSlowSingleCopyStagedMax = 64 * 1024;
// Likewise where the kernel's copy of one page takes this long or longer
// (NodeChannels::cma_page_seconds()), whatever the megabyte's ratio: each system call costs that
// much before it moves a byte, which a message of a few pages pays whole. On an AMD EPYC whose
// ratio is 1.9-2.8 the start-up probe found 2.0-2.2 us a page in six start-ups (lanes-micro
// copy/cma-read: 3.0 us for 4 KiB, 3.7 for 16 KiB, 5.3 for 64 KiB, where memcpy takes 0.15 us for
// 16 KiB and 0.84 for 64 KiB), and staged messages of 16 KiB were 2.3-2.8x faster than single-copy
// ones, of 64 KiB 1.2-1.7x, for the five collectives that combine nothing (p=2,
// bench/mpi_reused_loop.c under liblanes_mpi, three rounds alternating LANES_CMA_SLOWDOWN=1.5 and
// 3, fastest round: bcast of 16 KiB 1.41 us against 3.88, Open MPI 3.87; of 64 KiB 3.52 against
// 5.92, Open MPI 5.23). On the Intel Xeon above, whose whole single-copy bcast of 8 KB took
// 1.24-1.39 us, a page took less than that. Hence 1.5 us.
inline constexpr double kSlowSingleCopyPageSeconds = 1.5e-6;
// Whether messages up to kSlowSingleCopyStagedMax go staged where each process has a core: the
// kernel's copy is slow per byte (the ratio) or per call (a page's time), as probed.
constexpr bool slow_small_single_copy(double cma_slowdown, double cma_page_seconds) {
  return cma_slowdown >= kSlowSingleCopyRatio || cma_page_seconds >= kSlowSingleCopyPageSeconds;
}
// Where processes share cores and the kernel's copy is that slow, messages whose receiver was to
// copy them (hints pulled, exchange, balanced, fanout) go staged up to this size: a single copy
// there also waits for its peer to be scheduled, while a staged sender leaves its pieces in the
// slot and goes on. Messages hinted no or shared (a bcast's relays, reductions) stay single-copy:
// so staged too, a pipelined bcast and an allreduce were slower in most cells at 40-400 KB (bcast
// up to 2.4x, allreduce up to 1.6x). Measured on the AMD EPYC, 4 processes on the 2 cores,
// lanes-bench --algorithms auto --impl lanes, two rounds, medians against single copy: 120 KB
// blocks scatter 14-20 us against 48-59, alltoall 72 against 118-121, allgather 91-102 against
// 137-143, gather 31-33 against 38-40; 200 KB scatter 39 against 62-68, alltoall 125-130 against
// 157-160, allgather 118-123 against 185-199, gather 53-63 against 47-51; staging up to 512 KiB was
// slower for scatter and gather of 400 KB (106 and 116 us against 90 and 83).
inline constexpr std::size_t kSharedCoresSlowStagedMax = 256 * 1024;
struct Staging {
  std::size_t piece = 0;  // bytes per piece (the last one may be shorter); the size when whole
  std::size_t ring = 1;   // pieces the buffer holds at once
  bool whole() const { return ring == 1; }
};
Staging staging_of(std::size_t bytes, std::size_t chunk);

// A node's channels take at most this much memory per communicator, up to 256 local ranks.
inline constexpr std::size_t kChannelBudget = std::size_t{48} << 20;
inline constexpr int kMinSlots = 2;
inline constexpr std::size_t kMinChunk = 64;

// Chunks shrink with the number of pairs so the segment stays modest on large nodes; past the
// budget, slots per pair and then chunks shrink until it holds (down to kMinSlots slots of
// kMinChunk-byte chunks; above 256 local ranks that floor alone exceeds the budget).
ChannelGeometry default_geometry(int local_size);
std::size_t channel_segment_bytes(const ChannelGeometry& g);

class NodeChannels;

// What a receive may do with its message in place of copying it into its destination: consume
// it piece by piece as the pieces arrive (a reduction combines them straight out of the slot).
// `consume(context, token, offset, piece, bytes)` gets every byte once, in order, in pieces
// that are whole multiples of NodeChannels::piece_bytes() but the last; a single-copy message
// lands in the destination first and is consumed from there in one piece. Returns false to fail
// the receive (the sender learns that its message was rejected).
struct PieceSink {
  bool (*consume)(void* context, std::uint32_t token, std::size_t offset, const char* piece,
                  std::size_t bytes) = nullptr;
  void* context = nullptr;
  std::uint32_t token = 0;
  explicit operator bool() const { return consume != nullptr; }
};

class ShmTransfer {
 public:
  ShmTransfer() = default;
  XferState test(std::string& error);
  int peer() const { return peer_; }
  // After a failure: the other process no longer exists.
  bool peer_gone() const { return peer_gone_; }
  // After a failure: the two sides' sizes differ.
  bool size_mismatch() const { return size_mismatch_; }
  // A send that goes single-copy (cma) rather than staged, and how.
  bool single_copy() const { return single_ != SingleCopy::no; }
  SingleCopy single_mode() const { return single_; }
  // A receive whose message went to its sink rather than into its destination.
  bool sunk() const { return static_cast<bool>(sink_); }
  // A pending receive whose call failed: takes back the destination it published for a
  // single-copy sender, or, where the sender already claimed it, waits until that write ended
  // (or the sender died, or `deadline`). Afterwards no peer writes into the receive buffer and
  // the transfer reads as failed. Does nothing to sends and to finished transfers.
  void withdraw(std::chrono::steady_clock::time_point deadline);

 private:
  friend class NodeChannels;
  enum class Step : std::uint8_t {
    wait_slot,       // both: the slot still holds message msg - slots
    send_wait_recv,  // cma sender: waiting for the receiver's address
    send_wait_done,  // cma sender: waiting until the receiver has everything
    send_staged,     // staged sender: writing chunks
    recv_wait_post,  // receiver: waiting for the sender's descriptor
    recv_wait_push,  // cma receiver: waiting for the sender's part
    recv_staged,     // staged receiver: reading chunks
    finished,
  };
  XferState fail(std::string& error, std::string why);
  // Copies pieces of a claimed shared message until none is left to take: a sender writes them
  // from the front, a receiver reads them from the back. False once the transfer failed.
  bool copy_claimed_pieces(std::string& error);
  bool slot_free() const;
  XferState advance_send(std::string& error);
  XferState advance_recv(std::string& error);
  // Hands [offset, offset + n) of the message to the sink, or copies it into the destination.
  bool deliver(std::size_t offset, const char* from, std::size_t n) const;

  NodeChannels* ch_ = nullptr;
  void* slot_ = nullptr;
  int peer_ = -1;
  bool is_send_ = false;
  std::uint64_t tag_ = 0;  // message number + 1
  char* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t piece_index_ = 0;
  SingleCopy single_ = SingleCopy::no;  // sender: cma rather than staged, and who copies
  // A shared message of kSharedSplitMin bytes or more: the sender allows claimed pieces
  // (claimable_); this side has copies of its own to make (busy_); the two sides claim pieces
  // (claimed_, where either side is busy); a busy receiver let its first poll pass (deferred_).
  bool claimable_ = false;
  bool busy_ = false;
  bool claimed_ = false;
  bool deferred_ = false;
  std::size_t push_ = 0;  // shared sender: the part it writes itself
  PieceSink sink_;        // receiver: consumes the message instead of data_
  Step step_ = Step::wait_slot;
  bool peer_gone_ = false;
  bool size_mismatch_ = false;
  XferState state_ = XferState::pending;
  std::shared_ptr<const std::string> error_;  // after a failure (moves cost two pointers)
};

class NodeChannels {
 public:
  // `initialize`: this process created the segment and lays out the header.
  NodeChannels(ShmSegment segment, int local_rank, const ChannelGeometry& geometry, bool initialize,
               CopyPolicy policy);
  NodeChannels(const NodeChannels&) = delete;
  NodeChannels& operator=(const NodeChannels&) = delete;

  // This process's heap, published with publish_self(), and the mappings of its peers' heaps
  // (shared by its communicators): call before publish_self(); without it no message reads a
  // peer's heap.
  void use_heaps(const SharedHeap* own, std::shared_ptr<PeerHeaps> peers);
  // Writes this process's pid, mapping address and heap into the header (before the first
  // barrier).
  void publish_self();
  // Copies every peer's pid out of the header (after the barrier that follows publish_self):
  // from then on a transfer never reads who its peer is from memory the peers can write.
  void fix_peers();
  // Maps every peer's heap (after fix_peers); false when one cannot be mapped here. Messages
  // read peers' heaps only after set_heaps_mapped(true), which the node's processes call alike
  // once all of them mapped every heap.
  bool map_peer_heaps();
  void set_heaps_mapped(bool mapped) { heaps_mapped_ = mapped; }
  bool heaps_mapped() const { return heaps_mapped_; }
  // Whether a message from [data, data + bytes) can be read by its receiver out of this
  // process's heap.
  bool source_mapped(const void* data, std::size_t bytes) const {
    return heaps_mapped_ && own_heap_ != nullptr && own_heap_->contains(data, bytes);
  }
  // This process's address of [addr, addr + bytes) of local rank `peer`'s memory where that lies
  // in the peer's heap, else nullptr.
  char* peer_memory(int peer, std::uint64_t addr, std::size_t bytes) const;
  // Copies `bytes` from the peer's `remote` into `local` (or from `local` to `remote` when
  // `write`): memcpy where `remote` lies in the peer's heap, else through the kernel (false with
  // `error` and errno on failure).
  bool copy_with_peer(int peer, bool write, char* local, std::uint64_t remote, std::size_t bytes,
                      std::string& error) const;
  // Reads every peer's header through process_vm_readv; on any failure clears the node-wide CMA
  // flag. Where that works, times a read of a peer's mapping of the segment against memcpy
  // (cma_slowdown()). Call after every local rank published itself; read cma() after a second
  // barrier.
  void probe_cma();
  // Single copy works on this node / is this process's default for large messages.
  bool cma_possible() const;
  bool cma() const;
  // How many times longer process_vm_readv took than memcpy for the same pages, here or in the
  // communicator this one was split from; 0 when not measured.
  double cma_slowdown() const { return cma_slowdown_; }
  // What the node's processes agreed on (every process must use the same value where the choice
  // of algorithm reads it).
  void set_cma_slowdown(double slowdown) { cma_slowdown_ = slowdown; }
  // Seconds the kernel's copy of one page of a peer took here (probe_cma(), or the communicator
  // this one was split from); 0 when not measured. Set, like the ratio, to what the node agreed.
  double cma_page_seconds() const { return cma_page_seconds_; }
  void set_cma_page_seconds(double seconds) { cma_page_seconds_ = seconds; }
  void unlink() { segment_.unlink(); }
  const std::string& name() const { return segment_.name(); }

  int local_rank() const { return local_rank_; }
  int local_size() const { return geometry_.local_size; }
  pid_t pid_of(int local) const;
  bool peer_alive(int local) const;

  // Revocation: a member whose call failed records the error's code and its rank (the first
  // revocation stays); every member of the node reads it while it waits.
  void revoke(std::uint32_t code, std::uint32_t rank);
  bool revoked(std::uint32_t& code, std::uint32_t& rank) const;

  // The least size at which a hinted send goes single-copy: where a staged one goes in pieces,
  // or, where this process prefers single copy (processes share cores), above the chunk.
  std::size_t single_copy_min() const;
  // The least size at which a send with `hint` goes single-copy where single copy works (the
  // rule send() follows); 0: never.
  std::size_t single_copy_min(SingleCopy hint) const;
  // Message number `msg` (0, 1, 2, ... per ordered pair) to/from local rank `peer`. A send goes
  // single-copy where that works and this process prefers it (above the inline limit, shared),
  // or where `hint` asks for it (see SingleCopy).
  ShmTransfer send(int peer, std::uint64_t msg, const void* data, std::size_t bytes,
                   SingleCopy hint = SingleCopy::no);
  // With a `sink`, the message is consumed by it rather than copied into `data` (which a
  // single-copy message still lands in).
  // `busy`: this receiver has copies of its own to make meanwhile (a gather's root): a shared
  // message from kSharedSplitMin bytes then goes by claimed pieces, so that its sender copies
  // more of it.
  ShmTransfer recv(int peer, std::uint64_t msg, void* data, std::size_t bytes, PieceSink sink = {},
                   bool busy = false);
  // The size of the pieces a staged message of `bytes` crosses its slot in (the last one may be
  // shorter): `bytes` itself when it goes whole.
  std::size_t piece_bytes(std::size_t bytes) const;
  // Starts fetching the receiver's line of the slot that message `msg` to `peer` will use, so
  // that the send finds it at hand: that line was last written by the receiver `slots` messages
  // ago, and reading it is otherwise a cache miss on every send.
  void prefetch_send_slot(int peer, std::uint64_t msg) const;
  // The part of a shared single-copy message of `bytes` that the sender writes into the
  // receiver's buffer (the receiver reads the rest itself; 0 below kSharedPushMin where each
  // process has a core, and the message goes pulled), and that part for a balanced one
  // (SingleCopy::balanced; 0 where the kernel's copy is not slower than memcpy). Whole pages.
  std::size_t push_bytes(std::size_t bytes) const;
  std::size_t balanced_push_bytes(std::size_t bytes) const;

 private:
  friend class ShmTransfer;
  void* slot(int src, int dst, std::uint64_t msg) const;

  ShmSegment segment_;
  int local_rank_;
  ChannelGeometry geometry_;
  std::size_t slot_stride_ = 0;
  std::size_t slots_offset_ = 0;
  bool prefer_single_ = false;
  double cma_slowdown_ = 0;
  double cma_page_seconds_ = 0;
  std::vector<pid_t> pids_;  // fix_peers(); empty before
  const SharedHeap* own_heap_ = nullptr;
  std::shared_ptr<PeerHeaps> peer_heaps_;
  std::vector<HeapView> heap_views_;  // fix_peers()
  std::vector<char*> heap_maps_;      // map_peer_heaps(): this process's address of each heap
  bool heaps_mapped_ = false;
};

}  // namespace lanes::transport
