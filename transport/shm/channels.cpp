#include "transport/shm/channels.hpp"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <lanes/error.hpp>
#include <new>

#include "transport/shm/cma.hpp"

namespace lanes::transport {

namespace {

constexpr std::uint64_t kMagic = 0x6c616e65732d7368ull;  // "lanes-sh"
constexpr std::uint32_t kVersion = 9;
constexpr std::size_t kLine = 64;
constexpr std::size_t kPushUnit = 4096;  // a shared single copy splits at a page boundary
// SendLine::single: the SingleCopy in the low byte, and for a shared message that may go by
// claimed pieces (kSharedSplitMin), kClaimable, with kSenderBusy where the sender has copies of
// its own to make (a balanced hint).
constexpr std::uint32_t kModeMask = 0xFFu;
constexpr std::uint32_t kClaimable = 0x100u;
constexpr std::uint32_t kSenderBusy = 0x200u;
constexpr auto acq = std::memory_order_acquire;
constexpr auto rel = std::memory_order_release;

struct alignas(kLine) Header {
  std::uint64_t magic;
  std::uint32_t version;
  std::int32_t local_size;
  std::int32_t slots;
  std::int32_t push_percent;
  std::uint64_t chunk;
  std::atomic<std::uint32_t> cma;      // single-copy transfers work between every pair of the node
  std::atomic<std::uint64_t> revoked;  // 0, or the first revocation (NodeChannels::revoke)
};

struct alignas(kLine) PeerEntry {
  std::atomic<std::int64_t> pid;
  std::atomic<std::uint64_t> base;
  // The process's heap (HeapView), written before pid is published.
  std::int64_t heap_fd;
  std::uint64_t heap_inode;
  std::uint64_t heap_base;
  std::uint64_t heap_bytes;
};
static_assert(sizeof(PeerEntry) == kLine);

// A slot's control: three cache lines, each written by one side while the other polls it, so
// the pair's cores never fight over a line. The other side writes a word there at most once per
// message: a rejection, the claim of a single-copy destination, a counter reset before the
// message starts. A message of up to kInlineMax bytes travels in the sender's first line with
// its descriptor, so the receiver's poll fetches it too: one cache line crosses between the cores
// each way per message.
inline constexpr std::size_t kInlineMax = 40;
struct alignas(kLine) SendLine {
  std::atomic<std::uint64_t> posted;  // descriptor valid (tag)
  std::uint64_t bytes;
  std::uint32_t single;  // the sender chose single copy (cma), as a SingleCopy: shared or pulled
  std::uint32_t push_pages;  // shared: the sender writes the first push_pages * 4096 bytes
  char data[kInlineMax];     // a message of up to kInlineMax bytes
};
static_assert(sizeof(SendLine) == kLine);

struct alignas(kLine) SendMore {
  std::atomic<std::uint64_t> send_done;  // cma: the pushed part is in the receiver's buffer
  std::atomic<std::uint64_t> written;    // staged: pieces written (count)
  std::atomic<std::uint64_t> error;      // either side rejected or failed the message (tag)
  std::atomic<std::uint64_t> claim;      // cma: the sender's claim of the destination (tag), or
                                         // the receiver's withdrawal of it (tag | kWithdrawn)
  std::uint64_t src_addr;
};

// A shared message of kSharedSplitMin bytes or more: its pieces (share_piece()), claimed one at
// a time by whichever side comes first. Both sides write this line, a few times per message.
struct alignas(kLine) ShareLine {
  std::atomic<std::uint64_t> taken;        // pieces taken: the sender's from the front (low 32
                                           // bits), the receiver's from the back (high 32)
  std::atomic<std::uint64_t> pieces_done;  // pieces in the receiver's buffer
};

struct alignas(kLine) RecvLine {
  std::atomic<std::uint64_t> recv_posted;  // cma: destination address valid (tag)
  std::atomic<std::uint64_t> recv_done;    // message complete, slot free for message + slots
  std::atomic<std::uint64_t> read;         // staged: pieces consumed (count)
  std::uint64_t dst_addr;
  std::uint64_t dst_bytes;
  std::uint32_t busy;  // cma: the receiver has copies of its own to make (claimed pieces)
};

// The lines polled on the fast path share a 128-byte block, and the chunk buffers start on one:
// with the buffers at 192 bytes, 400-byte to 1 KiB calls at p=2 were 0.88-1.03x as fast as
// before the split (lanes-bench, alternating builds), which we put down to the core fetching
// lines in 128-byte pairs; at 256 bytes they were 0.95-1.07x.
struct SlotCtl {
  SendLine s;
  RecvLine r;
  SendMore m;
  ShareLine sh;
};
static_assert(sizeof(SlotCtl) == 4 * kLine);

// A receiver whose call failed takes its published destination back with this mark.
constexpr std::uint64_t kWithdrawn = std::uint64_t{1} << 63;

constexpr std::size_t round_up(std::size_t v, std::size_t a) {
  return (v + a - 1) / a * a;
}

// The pieces of a shared message that both sides claim: about a sixteenth of it in whole pages,
// from 64 KiB to 1 MiB, so that the side that finishes first takes over at most a piece late.
std::size_t share_piece(std::size_t bytes) {
  return std::clamp<std::size_t>(round_up(bytes / 16, kPushUnit), 64 * 1024, 1024 * 1024);
}
std::size_t share_pieces(std::size_t bytes) {
  const std::size_t piece = share_piece(bytes);
  return (bytes + piece - 1) / piece;
}

// Takes the next piece of `pieces` from the front (the sender) or the back (the receiver) of a
// shared message, so that each side copies one contiguous run; `pieces` when none is left.
std::uint64_t take_piece(std::atomic<std::uint64_t>& taken, std::uint64_t pieces, bool front) {
  constexpr std::uint64_t kLow = 0xFFFFFFFFu;
  std::uint64_t cur = taken.load(acq);
  for (;;) {
    const std::uint64_t f = cur & kLow, b = cur >> 32;
    if (f + b >= pieces) return pieces;
    const std::uint64_t next = front ? cur + 1 : cur + (std::uint64_t{1} << 32);
    if (taken.compare_exchange_weak(cur, next, std::memory_order_acq_rel, acq)) {
      return front ? f : pieces - 1 - b;
    }
  }
}

std::size_t header_bytes(int local_size) {
  return round_up(sizeof(Header), kLine) +
         round_up(sizeof(PeerEntry) * static_cast<std::size_t>(local_size), kLine);
}

std::size_t slot_stride(const ChannelGeometry& g) {
  return round_up(sizeof(SlotCtl), kLine) + 2 * round_up(g.chunk, kLine);
}

Header* header_of(void* base) {
  return static_cast<Header*>(base);
}
PeerEntry* peers_of(void* base) {
  return reinterpret_cast<PeerEntry*>(static_cast<char*>(base) + round_up(sizeof(Header), kLine));
}
char* buffer_of(void* slot) {
  return static_cast<char*>(slot) + round_up(sizeof(SlotCtl), kLine);
}
// Where a whole staged message of `bytes` lies: in the descriptor's line up to kInlineMax.
char* whole_area(void* slot, std::size_t bytes) {
  return bytes <= kInlineMax ? static_cast<SlotCtl*>(slot)->s.data : buffer_of(slot);
}

}  // namespace

ChannelGeometry default_geometry(int local_size) {
  ChannelGeometry g;
  g.local_size = local_size;
  const std::size_t pairs =
      static_cast<std::size_t>(local_size) * static_cast<std::size_t>(std::max(local_size - 1, 1));
  // Aim at about 16 MiB of chunk buffers per node; never below 4 KiB or above 256 KiB.
  std::size_t chunk = (16u << 20) / (pairs * static_cast<std::size_t>(g.slots) * 2);
  chunk = std::clamp<std::size_t>(chunk, 4096, 256 * 1024);
  g.chunk = std::size_t{1} << (63 - __builtin_clzll(chunk));  // a power of two
  // Large nodes: every ordered pair has its slots, so the segment grows with n^2. Within the
  // budget, fewer slots per pair first (down to 2: a sender still overlaps two messages), then
  // smaller chunks (large messages go single-copy there where the kernel allows it).
  while (channel_segment_bytes(g) > kChannelBudget && g.slots > kMinSlots) g.slots /= 2;
  while (channel_segment_bytes(g) > kChannelBudget && g.chunk > kMinChunk) g.chunk /= 2;
  return g;
}

Staging staging_of(std::size_t bytes, std::size_t chunk) {
  if (bytes <= std::min(chunk, kWholeMax)) return Staging{bytes, 1};
  // Past a chunk, pieces of a chunk, two at a time: both copies overlap already.
  if (bytes > chunk) return Staging{chunk, 2};
  // Within a chunk (here at least 32 KiB), a quarter of the message from 8 KiB on: small
  // enough to overlap the two copies, large enough that each piece's hand-over (a counter both
  // sides poll) stays a small share of its copy. Whole cache lines.
  constexpr std::size_t kMinPiece = 8 * 1024;
  const std::size_t piece = std::max(round_up((bytes + 3) / 4, kLine), kMinPiece);
  return Staging{piece, 2 * chunk / piece};
}

std::size_t channel_segment_bytes(const ChannelGeometry& g) {
  const auto n = static_cast<std::size_t>(g.local_size);
  const std::size_t pairs = n * (n > 0 ? n - 1 : 0);
  return header_bytes(g.local_size) + pairs * static_cast<std::size_t>(g.slots) * slot_stride(g);
}

// ---------------------------------------------------------------------------------------------
NodeChannels::NodeChannels(ShmSegment segment, int local_rank, const ChannelGeometry& geometry,
                           bool initialize, CopyPolicy policy)
    : segment_(std::move(segment)),
      local_rank_(local_rank),
      geometry_(geometry),
      prefer_single_(policy.prefer_single),
      cma_slowdown_(policy.cma_slowdown),
      cma_page_seconds_(policy.cma_page_seconds) {
  slot_stride_ = slot_stride(geometry_);
  slots_offset_ = header_bytes(geometry_.local_size);
  if (segment_.size() < channel_segment_bytes(geometry_)) {
    throw Error(Errc::internal, "shared-memory segment smaller than its channels");
  }
  void* base = segment_.data();
  if (initialize) {
    auto* h = new (base) Header{};
    h->magic = kMagic;
    h->version = kVersion;
    h->local_size = geometry_.local_size;
    h->slots = geometry_.slots;
    h->push_percent = geometry_.push_percent;
    h->chunk = geometry_.chunk;
    h->cma.store(policy.single_possible ? 1 : 0);
    for (int i = 0; i < geometry_.local_size; ++i) new (peers_of(base) + i) PeerEntry{};
    const auto n = static_cast<std::size_t>(geometry_.local_size);
    for (std::size_t s = 0; s < n * (n - 1) * static_cast<std::size_t>(geometry_.slots); ++s) {
      new (static_cast<char*>(base) + slots_offset_ + s * slot_stride_) SlotCtl{};
    }
  } else {
    const Header* h = header_of(base);
    if (h->magic != kMagic || h->version != kVersion || h->local_size != geometry_.local_size ||
        h->slots != geometry_.slots || h->chunk != geometry_.chunk) {
      throw Error(Errc::internal, "shared-memory segment " + segment_.name() +
                                      " has an unexpected layout (mixed lanes versions?)");
    }
  }
}

void NodeChannels::use_heaps(const SharedHeap* own, std::shared_ptr<PeerHeaps> peers) {
  own_heap_ = own;
  peer_heaps_ = std::move(peers);
}

void NodeChannels::publish_self() {
  PeerEntry& me = peers_of(segment_.data())[local_rank_];
  me.base.store(reinterpret_cast<std::uint64_t>(segment_.data()));
  const HeapView heap = own_heap_ != nullptr ? own_heap_->view() : HeapView{};
  me.heap_fd = heap.fd;
  me.heap_inode = heap.inode;
  me.heap_base = heap.base;
  me.heap_bytes = heap.bytes;
  me.pid.store(static_cast<std::int64_t>(getpid()), std::memory_order_release);
}

void NodeChannels::probe_cma() {
  Header* h = header_of(segment_.data());
  if (h->cma.load() == 0) return;
  for (int peer = 0; peer < geometry_.local_size; ++peer) {
    if (peer == local_rank_) continue;
    const PeerEntry& e = peers_of(segment_.data())[peer];
    std::uint64_t magic = 0;
    std::string error;
    const bool ok = cma_read(static_cast<pid_t>(e.pid.load(std::memory_order_acquire)), &magic,
                             reinterpret_cast<const void*>(e.base.load()), sizeof magic, error);
    if (!ok || magic != kMagic) {
      h->cma.store(0);
      return;
    }
  }
  // The rate: a megabyte (or the segment) of the next local rank's mapping of the segment.
  const int peer = (local_rank_ + 1) % geometry_.local_size;
  if (peer == local_rank_) return;
  const std::size_t bytes = std::min<std::size_t>(std::size_t{1} << 20, segment_.size());
  const auto* peer_base =
      reinterpret_cast<const void*>(peers_of(segment_.data())[peer].base.load());
  cma_slowdown_ = transport::cma_slowdown(pid_of(peer), peer_base, segment_.data(), bytes);
  cma_page_seconds_ = transport::cma_page_seconds(pid_of(peer), peer_base);
}

bool NodeChannels::cma_possible() const {
  return header_of(segment_.data())->cma.load(std::memory_order_relaxed) != 0;
}

bool NodeChannels::cma() const {
  return prefer_single_ && cma_possible();
}

std::size_t NodeChannels::single_copy_min() const {
  // Where processes share cores, a message that fits the slot's two chunks goes staged: its
  // sender is done once it copied it in, without waiting for the receiver to be scheduled.
  if (prefer_single_) return geometry_.chunk + 1;
  return std::min(geometry_.chunk, kSingleCopyMin) + 1;
}

void NodeChannels::fix_peers() {
  pids_.clear();
  heap_views_.clear();
  for (int i = 0; i < geometry_.local_size; ++i) {
    const PeerEntry& e = peers_of(segment_.data())[i];
    pids_.push_back(static_cast<pid_t>(e.pid.load(std::memory_order_acquire)));
    HeapView v;
    v.pid = pids_.back();
    v.fd = e.heap_fd;
    v.inode = e.heap_inode;
    v.base = e.heap_base;
    v.bytes = e.heap_bytes;
    heap_views_.push_back(v);
  }
}

bool NodeChannels::map_peer_heaps() {
  heap_maps_.assign(heap_views_.size(), nullptr);
  if (!peer_heaps_) return true;
  bool all = true;
  for (std::size_t i = 0; i < heap_views_.size(); ++i) {
    if (static_cast<int>(i) == local_rank_ || heap_views_[i].bytes == 0) continue;
    heap_maps_[i] = peer_heaps_->map(heap_views_[i]);
    if (heap_maps_[i] == nullptr) all = false;
  }
  return all;
}

char* NodeChannels::peer_memory(int peer, std::uint64_t addr, std::size_t bytes) const {
  if (!heaps_mapped_ || static_cast<std::size_t>(peer) >= heap_maps_.size()) return nullptr;
  char* mapped = heap_maps_[static_cast<std::size_t>(peer)];
  const HeapView& v = heap_views_[static_cast<std::size_t>(peer)];
  if (mapped == nullptr || addr < v.base || bytes > v.bytes || addr - v.base > v.bytes - bytes) {
    return nullptr;
  }
  return mapped + (addr - v.base);
}

bool NodeChannels::copy_with_peer(int peer, bool write, char* local, std::uint64_t remote,
                                  std::size_t bytes, std::string& error) const {
  if (char* mapped = peer_memory(peer, remote, bytes)) {
    if (bytes > 0) std::memcpy(write ? mapped : local, write ? local : mapped, bytes);
    return true;
  }
  return write ? cma_write(pid_of(peer), local, reinterpret_cast<void*>(remote), bytes, error)
               : cma_read(pid_of(peer), local, reinterpret_cast<const void*>(remote), bytes, error);
}

pid_t NodeChannels::pid_of(int local) const {
  if (!pids_.empty()) return pids_[static_cast<std::size_t>(local)];
  return static_cast<pid_t>(peers_of(segment_.data())[local].pid.load(std::memory_order_acquire));
}

bool NodeChannels::peer_alive(int local) const {
  const pid_t pid = pid_of(local);
  if (pid <= 0) return true;  // not yet published
  return kill(pid, 0) == 0 || errno == EPERM;
}

void* NodeChannels::slot(int src, int dst, std::uint64_t msg) const {
  if (src == dst || src < 0 || dst < 0 || src >= geometry_.local_size ||
      dst >= geometry_.local_size) {
    throw Error(Errc::internal, "no node channel from local rank " + std::to_string(src) + " to " +
                                    std::to_string(dst));
  }
  const auto n = static_cast<std::size_t>(geometry_.local_size);
  const auto slots = static_cast<std::size_t>(geometry_.slots);
  // The n(n-1) ordered pairs of distinct ranks, by source, then destination.
  const auto d = static_cast<std::size_t>(dst < src ? dst : dst - 1);
  const std::size_t index =
      (static_cast<std::size_t>(src) * (n - 1) + d) * slots + static_cast<std::size_t>(msg % slots);
  return static_cast<char*>(segment_.data()) + slots_offset_ + index * slot_stride_;
}

void NodeChannels::prefetch_send_slot(int peer, std::uint64_t msg) const {
  __builtin_prefetch(&static_cast<const SlotCtl*>(slot(local_rank_, peer, msg))->r, 0);
}

std::size_t NodeChannels::push_bytes(std::size_t bytes) const {
  if (!prefer_single_ && bytes < kSharedPushMin) return 0;
  const std::size_t share = bytes / 100 * static_cast<std::size_t>(geometry_.push_percent);
  return share / kPushUnit * kPushUnit;
}

std::size_t NodeChannels::balanced_push_bytes(std::size_t bytes) const {
  if (cma_slowdown_ <= 1 || (!prefer_single_ && bytes < kSharedPushMin)) return 0;
  const double share = (1 - 1 / cma_slowdown_) / 2;
  return static_cast<std::size_t>(static_cast<double>(bytes) * share) / kPushUnit * kPushUnit;
}

void NodeChannels::revoke(std::uint32_t code, std::uint32_t rank) {
  std::uint64_t none = 0;
  const std::uint64_t mine = (std::uint64_t{code} << 32) | (std::uint64_t{rank} + 1);
  header_of(segment_.data())
      ->revoked.compare_exchange_strong(none, mine, std::memory_order_acq_rel);
}

bool NodeChannels::revoked(std::uint32_t& code, std::uint32_t& rank) const {
  const std::uint64_t v = header_of(segment_.data())->revoked.load(acq);
  if (v == 0) return false;
  code = static_cast<std::uint32_t>(v >> 32);
  rank = static_cast<std::uint32_t>(v & 0xFFFFFFFFu) - 1;
  return true;
}

ShmTransfer NodeChannels::send(int peer, std::uint64_t msg, const void* data, std::size_t bytes,
                               SingleCopy hint) {
  ShmTransfer t;
  t.ch_ = this;
  t.slot_ = slot(local_rank_, peer, msg);
  t.peer_ = peer;
  t.is_send_ = true;
  t.tag_ = msg + 1;
  t.data_ = const_cast<char*>(static_cast<const char*>(data));
  t.bytes_ = bytes;
  // From the sender's heap the receiver reads the message itself at memcpy's rate (a reduction
  // combines it from there): single copy whatever the hint, and pulled unless the hint has both
  // sides copy (where the kernel's copy works and the receiver published its buffer).
  const bool pipelined = hint == SingleCopy::pipelined;
  if (pipelined) hint = SingleCopy::no;
  const bool mapped = bytes >= kMappedMin && source_mapped(data, bytes) &&
                      !(pipelined && !prefer_single_ && bytes >= kMappedPipelinedMin);
  if (mapped && (hint == SingleCopy::no || !cma_possible() || bytes < single_copy_min())) {
    t.single_ = SingleCopy::pulled;
    return t;
  }
  if (!cma_possible()) return t;
  const std::size_t least = mapped ? kMappedMin : single_copy_min(hint);
  if (least == 0 || bytes < least) return t;
  if (hint == SingleCopy::fanout ||
      (hint == SingleCopy::exchange && (!prefer_single_ || bytes <= geometry_.chunk))) {
    t.single_ = SingleCopy::pulled;
  } else if (hint == SingleCopy::balanced && !prefer_single_) {
    t.push_ = balanced_push_bytes(bytes);
    t.single_ = t.push_ > 0 ? SingleCopy::shared : SingleCopy::pulled;
    if (bytes >= kSharedSplitMin) t.single_ = SingleCopy::shared;
  } else {
    // Where processes share cores, the sender pushes its half while the receiver may not even
    // be scheduled, rather than wait for the receiver to pull it all.
    t.single_ = prefer_single_ || hint == SingleCopy::no ? SingleCopy::shared : hint;
    if (t.single_ == SingleCopy::shared) {
      t.push_ = push_bytes(bytes);
      if (t.push_ == 0) t.single_ = SingleCopy::pulled;
    }
  }
  t.claimable_ = t.single_ == SingleCopy::shared && !prefer_single_ && bytes >= kSharedSplitMin;
  t.busy_ = t.claimable_ && hint == SingleCopy::balanced;
  return t;
}

std::size_t NodeChannels::single_copy_min(SingleCopy hint) const {
  std::size_t least = 0;
  switch (hint) {
    case SingleCopy::no:
    case SingleCopy::pipelined:
      least = prefer_single_ ? geometry_.chunk + 1 : 0;
      break;
    case SingleCopy::shared:
    case SingleCopy::pulled:
    case SingleCopy::balanced:
    case SingleCopy::fanout:
      least = single_copy_min();
      break;
    case SingleCopy::exchange:
      least = prefer_single_ ? std::min(geometry_.chunk, kWholeMax) + 1 : single_copy_min();
      break;
  }
  // The sender's choice only: a receiver publishes its destination from single_copy_min() on,
  // which stays below this, so a sender that goes single copy always finds it published.
  if (least > 0 && !prefer_single_ && slow_small_single_copy(cma_slowdown_, cma_page_seconds_)) {
    least = std::max(least, kSlowSingleCopyStagedMax + 1);
  }
  if (least > 0 && prefer_single_ && cma_slowdown_ >= kSlowSingleCopyRatio) {
    const bool receiver_copies = hint == SingleCopy::pulled || hint == SingleCopy::exchange ||
                                 hint == SingleCopy::balanced || hint == SingleCopy::fanout;
    if (receiver_copies) least = std::max(least, kSharedCoresSlowStagedMax + 1);
  }
  return least;
}

std::size_t NodeChannels::piece_bytes(std::size_t bytes) const {
  return staging_of(bytes, geometry_.chunk).piece;
}

ShmTransfer NodeChannels::recv(int peer, std::uint64_t msg, void* data, std::size_t bytes,
                               PieceSink sink, bool busy) {
  ShmTransfer t;
  t.sink_ = sink;
  t.busy_ = busy && !prefer_single_ && bytes >= kSharedSplitMin;
  t.ch_ = this;
  t.slot_ = slot(peer, local_rank_, msg);
  t.peer_ = peer;
  t.is_send_ = false;
  t.tag_ = msg + 1;
  t.data_ = static_cast<char*>(data);
  t.bytes_ = bytes;
  return t;
}

// ---------------------------------------------------------------------------------------------
XferState ShmTransfer::fail(std::string& error, std::string why) {
  state_ = XferState::failed;
  error_ = std::make_shared<const std::string>(std::move(why));
  error = *error_;
  step_ = Step::finished;
  return state_;
}

// Message m may use slot m % slots once the receiver completed message m - slots there.
bool ShmTransfer::slot_free() const {
  const auto slots = static_cast<std::uint64_t>(ch_->geometry_.slots);
  return static_cast<const SlotCtl*>(slot_)->r.recv_done.load(acq) + slots >= tag_;
}

XferState ShmTransfer::test(std::string& error) {
  if (state_ == XferState::failed && error_) error = *error_;
  if (state_ != XferState::pending) return state_;
  return is_send_ ? advance_send(error) : advance_recv(error);
}

void ShmTransfer::withdraw(std::chrono::steady_clock::time_point deadline) {
  if (is_send_ || state_ != XferState::pending) return;
  if (step_ != Step::recv_wait_post && step_ != Step::recv_wait_push) return;
  auto* s = static_cast<SlotCtl*>(slot_);
  state_ = XferState::failed;
  step_ = Step::finished;
  error_ = std::make_shared<const std::string>("withdrawn after the call failed");
  if (s->r.recv_posted.load(acq) != tag_) return;  // never published: nobody writes here
  // A sender that shares the message by pieces claims no more of them.
  if (claimed_ || (s->s.posted.load(acq) == tag_ && (s->s.single & kClaimable) != 0)) {
    s->sh.taken.fetch_add(std::uint64_t{1} << 30, std::memory_order_acq_rel);
  }
  std::uint64_t claim = 0;
  if (s->m.claim.compare_exchange_strong(claim, tag_ | kWithdrawn, std::memory_order_acq_rel)) {
    return;  // taken back before the sender claimed it
  }
  // The sender claimed the destination: its write is under way or over. It ends with send_done
  // (written), error (its write failed) or its death.
  while (s->m.send_done.load(acq) != tag_ && s->m.error.load(acq) != tag_ &&
         ch_->peer_alive(peer_) && std::chrono::steady_clock::now() < deadline) {
    sched_yield();
  }
}

bool ShmTransfer::copy_claimed_pieces(std::string& error) {
  auto* s = static_cast<SlotCtl*>(slot_);
  const std::size_t piece = share_piece(bytes_);
  const std::size_t pieces = share_pieces(bytes_);
  for (;;) {
    if (s->m.error.load(acq) == tag_) {
      fail(error,
           is_send_ ? "the receiver rejected the message" : "the sender failed to push data");
      return false;
    }
    const std::uint64_t c = take_piece(s->sh.taken, pieces, is_send_);
    if (c >= pieces) return true;
    const std::size_t off = c * piece;
    const std::size_t n = std::min(piece, bytes_ - off);
    std::string why;
    const bool ok = ch_->copy_with_peer(peer_, is_send_, data_ + off,
                                        (is_send_ ? s->r.dst_addr : s->m.src_addr) + off, n, why);
    if (!ok) {
      peer_gone_ = errno == ESRCH;
      s->m.error.store(tag_, rel);
      fail(error, why);
      return false;
    }
    s->sh.pieces_done.fetch_add(1, std::memory_order_acq_rel);
  }
}

XferState ShmTransfer::advance_send(std::string& error) {
  auto* s = static_cast<SlotCtl*>(slot_);
  char* buf = buffer_of(slot_);
  const Staging staging = staging_of(bytes_, ch_->geometry_.chunk);
  for (;;) {
    switch (step_) {
      case Step::wait_slot:
        if (!slot_free()) return XferState::pending;
        s->s.bytes = bytes_;
        // Every message sets it: the slot held another one before.
        s->s.single = static_cast<std::uint32_t>(single_) | (claimable_ ? kClaimable : 0u) |
                      (busy_ ? kSenderBusy : 0u);
        s->s.push_pages = static_cast<std::uint32_t>(push_ / kPushUnit);
        if (staging.whole() && single_ == SingleCopy::no) {
          if (bytes_ > 0) std::memcpy(whole_area(slot_, bytes_), data_, bytes_);
          s->s.posted.store(tag_, rel);
          ch_->prefetch_send_slot(peer_, tag_);  // the next message's (tag_ is msg + 1)
          step_ = Step::finished;
          return state_ = XferState::done;
        }
        s->m.src_addr = reinterpret_cast<std::uint64_t>(data_);
        if (single_ == SingleCopy::pulled) {  // the receiver copies it all: nothing to claim
          s->s.posted.store(tag_, rel);
          step_ = Step::send_wait_done;
        } else if (single_ == SingleCopy::shared) {
          if (claimable_) {
            s->sh.taken.store(0, std::memory_order_relaxed);
            s->sh.pieces_done.store(0, std::memory_order_relaxed);
          }
          s->s.posted.store(tag_, rel);
          step_ = Step::send_wait_recv;
          // A busy sender claims pieces from its next poll on: its own copies first (a scatter
          // root's own block), while the receiver starts on them.
          if (busy_) return XferState::pending;
        } else {
          s->m.written.store(0, std::memory_order_relaxed);
          s->r.read.store(0, std::memory_order_relaxed);
          s->s.posted.store(tag_, rel);
          piece_index_ = 0;
          step_ = Step::send_staged;
        }
        break;
      case Step::send_wait_recv: {
        // The receiver may have taken every piece and completed the message; the slot may even
        // carry a later message of this sender's by now: touch nothing then.
        if (claimable_ && s->r.recv_done.load(acq) >= tag_) {
          step_ = Step::finished;
          return state_ = XferState::done;
        }
        if (s->m.error.load(acq) == tag_) return fail(error, "the receiver rejected the message");
        if (s->r.recv_posted.load(acq) != tag_) return XferState::pending;
        if (s->r.dst_bytes != bytes_) {  // never write past the receiver's buffer
          s->m.error.store(tag_, rel);
          size_mismatch_ = true;
          return fail(error, "the receiver expects " + std::to_string(s->r.dst_bytes) +
                                 " bytes, not " + std::to_string(bytes_));
        }
        // The destination is the receiver's until it withdraws it: claim it first, so that a
        // receiver whose call failed either took it back (and nothing is written) or waits for
        // this write to end (ShmTransfer::withdraw).
        std::uint64_t unclaimed = 0;
        if (!s->m.claim.compare_exchange_strong(unclaimed, tag_, std::memory_order_acq_rel)) {
          return fail(error, "the receiver gave the message up (its call failed)");
        }
        std::string why;
        claimed_ = claimable_ && (busy_ || s->r.busy != 0);
        if (claimed_) {
          if (!copy_claimed_pieces(error)) return state_;
        } else if (push_ > 0 &&
                   !ch_->copy_with_peer(peer_, true, data_, s->r.dst_addr, push_, why)) {
          peer_gone_ = errno == ESRCH;
          s->m.error.store(tag_, rel);
          return fail(error, why);
        }
        s->m.send_done.store(tag_, rel);
        step_ = Step::send_wait_done;
        break;
      }
      case Step::send_wait_done:
        if (s->m.error.load(acq) == tag_) return fail(error, "the receiver rejected the message");
        if (s->r.recv_done.load(acq) < tag_) return XferState::pending;
        step_ = Step::finished;
        return state_ = XferState::done;
      case Step::send_staged: {
        const std::size_t piece = staging.piece;
        const std::size_t pieces = (bytes_ + piece - 1) / piece;
        while (piece_index_ < pieces) {
          if (s->m.error.load(acq) == tag_) return fail(error, "the receiver rejected the message");
          // Piece c reuses the place of piece c - ring: wait until that one was read.
          if (s->r.read.load(acq) + staging.ring <= piece_index_) return XferState::pending;
          const std::size_t off = piece_index_ * piece;
          std::memcpy(buf + (piece_index_ % staging.ring) * piece, data_ + off,
                      std::min(piece, bytes_ - off));
          ++piece_index_;
          s->m.written.store(piece_index_, rel);
        }
        step_ = Step::finished;
        return state_ = XferState::done;
      }
      default:
        return fail(error, "internal: bad send step");
    }
  }
}

bool ShmTransfer::deliver(std::size_t offset, const char* from, std::size_t n) const {
  if (sink_) return sink_.consume(sink_.context, sink_.token, offset, from, n);
  if (n > 0 && from != data_ + offset) std::memcpy(data_ + offset, from, n);
  return true;
}

XferState ShmTransfer::advance_recv(std::string& error) {
  auto* s = static_cast<SlotCtl*>(slot_);
  char* buf = buffer_of(slot_);
  for (;;) {
    switch (step_) {
      case Step::wait_slot:
        if (!slot_free()) return XferState::pending;
        // Where the sender may choose single copy, the destination is published in advance: the
        // sender's push need not wait for a second round trip.
        if (bytes_ >= ch_->single_copy_min() && ch_->cma_possible()) {
          s->r.dst_addr = reinterpret_cast<std::uint64_t>(data_);
          s->r.dst_bytes = bytes_;
          s->r.busy = busy_ ? 1u : 0u;
          s->m.claim.store(0, std::memory_order_relaxed);  // published by the release below
          s->r.recv_posted.store(tag_, rel);
        }
        step_ = Step::recv_wait_post;
        break;
      case Step::recv_wait_post: {
        if (s->s.posted.load(acq) != tag_) return XferState::pending;
        if (s->s.bytes != bytes_) {
          s->m.error.store(tag_, rel);
          size_mismatch_ = true;
          return fail(error, "a local peer sent " + std::to_string(s->s.bytes) + " bytes where " +
                                 std::to_string(bytes_) +
                                 " were expected (do all ranks pass the same sizes? "
                                 "LANES_CHECK=1 tells)");
        }
        const std::uint32_t mode = s->s.single & kModeMask;
        if (mode == 0 && staging_of(bytes_, ch_->geometry_.chunk).whole()) {
          if (bytes_ > 0 && !deliver(0, whole_area(slot_, bytes_), bytes_)) {
            s->m.error.store(tag_, rel);
            return fail(error, "the receiver could not take the message");
          }
          s->r.recv_done.store(tag_, rel);
          step_ = Step::finished;
          return state_ = XferState::done;
        }
        claimed_ = (s->s.single & kClaimable) != 0 && ((s->s.single & kSenderBusy) != 0 || busy_);
        // Single copy out of the sender's heap works without the kernel's copy.
        const char* mapped = mode != 0 ? ch_->peer_memory(peer_, s->m.src_addr, bytes_) : nullptr;
        if (mode != 0 && claimed_) {
          if (!ch_->cma_possible() && mapped == nullptr) {
            return fail(error, "internal: single copy where CMA fails");
          }
          // A busy receiver claims pieces from its next poll on: its own copies first.
          if (busy_ && !deferred_) {
            deferred_ = true;
            return XferState::pending;
          }
          if (!copy_claimed_pieces(error)) return state_;
          step_ = Step::recv_wait_push;
          break;
        }
        if (mode != 0) {
          if (!ch_->cma_possible() && mapped == nullptr) {
            return fail(error, "internal: single copy where CMA fails");
          }
          const bool pulled = mode == static_cast<std::uint32_t>(SingleCopy::pulled);
          const std::size_t push = pulled ? 0 : std::size_t{s->s.push_pages} * kPushUnit;
          if (push > bytes_) {
            s->m.error.store(tag_, rel);
            return fail(error, "internal: the sender's share exceeds its message");
          }
          if (pulled && mapped != nullptr) {  // straight out of the sender's heap, sink or not
            if (!deliver(0, mapped, bytes_)) {
              s->m.error.store(tag_, rel);
              return fail(error, "the receiver could not take the message");
            }
            s->r.recv_done.store(tag_, rel);
            step_ = Step::finished;
            return state_ = XferState::done;
          }
          std::string why;
          if (!ch_->copy_with_peer(peer_, false, data_ + push, s->m.src_addr + push, bytes_ - push,
                                   why)) {
            peer_gone_ = errno == ESRCH;
            s->m.error.store(tag_, rel);
            return fail(error, why);
          }
          if (pulled) {
            if (sink_ && !deliver(0, data_, bytes_)) {
              s->m.error.store(tag_, rel);
              return fail(error, "the receiver could not take the message");
            }
            s->r.recv_done.store(tag_, rel);
            step_ = Step::finished;
            return state_ = XferState::done;
          }
          step_ = Step::recv_wait_push;
        } else {
          piece_index_ = 0;
          step_ = Step::recv_staged;
        }
        break;
      }
      case Step::recv_wait_push:
        if (claimed_) {
          if (s->sh.pieces_done.load(acq) < share_pieces(bytes_)) {
            if (s->m.error.load(acq) == tag_) return fail(error, "the sender failed to push data");
            return XferState::pending;
          }
        } else if (s->m.send_done.load(acq) != tag_) {
          if (s->m.error.load(acq) == tag_) return fail(error, "the sender failed to push data");
          return XferState::pending;
        }
        if (sink_ && !deliver(0, data_, bytes_)) {
          s->m.error.store(tag_, rel);
          return fail(error, "the receiver could not take the message");
        }
        s->r.recv_done.store(tag_, rel);
        step_ = Step::finished;
        return state_ = XferState::done;
      case Step::recv_staged: {
        const Staging staging = staging_of(bytes_, ch_->geometry_.chunk);
        const std::size_t piece = staging.piece;
        const std::size_t pieces = (bytes_ + piece - 1) / piece;
        while (piece_index_ < pieces) {
          if (s->m.written.load(acq) < piece_index_ + 1) return XferState::pending;
          const std::size_t off = piece_index_ * piece;
          if (!deliver(off, buf + (piece_index_ % staging.ring) * piece,
                       std::min(piece, bytes_ - off))) {
            s->m.error.store(tag_, rel);
            return fail(error, "the receiver could not take the message");
          }
          ++piece_index_;
          s->r.read.store(piece_index_, rel);
        }
        s->r.recv_done.store(tag_, rel);
        step_ = Step::finished;
        return state_ = XferState::done;
      }
      default:
        return fail(error, "internal: bad receive step");
    }
  }
}

}  // namespace lanes::transport
