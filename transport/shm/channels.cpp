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
constexpr std::uint32_t kVersion = 3;
constexpr std::size_t kLine = 64;
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
};

struct alignas(kLine) Flag {
  std::atomic<std::uint64_t> v;
};

// Each flag on its own cache line: the two sides write different ones.
struct SlotCtl {
  Flag posted;       // sender: descriptor valid
  Flag recv_posted;  // receiver: destination address valid (cma)
  Flag send_done;    // sender: its pushed part is in the receiver's buffer (cma)
  Flag recv_done;    // receiver: message complete, slot free for message + slots
  Flag written;      // staged: chunks written by the sender (count)
  Flag read;         // staged: chunks consumed by the receiver (count)
  Flag error;        // receiver rejected the message
  Flag claim;        // cma: the sender's claim of the destination (tag), or the receiver's
                     // withdrawal of it (tag | kWithdrawn); 0 while neither happened
  alignas(kLine) std::uint64_t src_addr;
  std::uint64_t bytes;
  std::uint64_t single;  // the sender chose single copy (cma); the receiver follows
  alignas(kLine) std::uint64_t dst_addr;
  std::uint64_t dst_bytes;
};

// A receiver whose call failed takes its published destination back with this mark.
constexpr std::uint64_t kWithdrawn = std::uint64_t{1} << 63;

constexpr std::size_t round_up(std::size_t v, std::size_t a) {
  return (v + a - 1) / a * a;
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
  return g;
}

std::size_t channel_segment_bytes(const ChannelGeometry& g) {
  const auto n = static_cast<std::size_t>(g.local_size);
  return header_bytes(g.local_size) + n * n * static_cast<std::size_t>(g.slots) * slot_stride(g);
}

// ---------------------------------------------------------------------------------------------
NodeChannels::NodeChannels(ShmSegment segment, int local_rank, const ChannelGeometry& geometry,
                           bool initialize, CopyPolicy policy)
    : segment_(std::move(segment)),
      local_rank_(local_rank),
      geometry_(geometry),
      prefer_single_(policy.prefer_single) {
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
    for (std::size_t s = 0; s < n * n * static_cast<std::size_t>(geometry_.slots); ++s) {
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

void NodeChannels::publish_self() {
  PeerEntry& me = peers_of(segment_.data())[local_rank_];
  me.base.store(reinterpret_cast<std::uint64_t>(segment_.data()));
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
}

bool NodeChannels::cma_possible() const {
  return header_of(segment_.data())->cma.load(std::memory_order_relaxed) != 0;
}

bool NodeChannels::cma() const {
  return prefer_single_ && cma_possible();
}

std::size_t NodeChannels::single_copy_min() const {
  return std::min(geometry_.chunk + 1, kSingleCopyMin);
}

void NodeChannels::fix_peers() {
  pids_.clear();
  for (int i = 0; i < geometry_.local_size; ++i) {
    pids_.push_back(
        static_cast<pid_t>(peers_of(segment_.data())[i].pid.load(std::memory_order_acquire)));
  }
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
  const auto n = static_cast<std::size_t>(geometry_.local_size);
  const auto slots = static_cast<std::size_t>(geometry_.slots);
  const std::size_t index =
      (static_cast<std::size_t>(src) * n + static_cast<std::size_t>(dst)) * slots +
      static_cast<std::size_t>(msg % slots);
  return static_cast<char*>(segment_.data()) + slots_offset_ + index * slot_stride_;
}

std::size_t NodeChannels::push_bytes(std::size_t bytes) const {
  const std::size_t share = bytes / 100 * static_cast<std::size_t>(geometry_.push_percent);
  return share / 4096 * 4096;
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
                               bool single_wanted) {
  ShmTransfer t;
  t.ch_ = this;
  t.slot_ = slot(local_rank_, peer, msg);
  t.peer_ = peer;
  t.is_send_ = true;
  t.tag_ = msg + 1;
  t.data_ = const_cast<char*>(static_cast<const char*>(data));
  t.bytes_ = bytes;
  t.single_ = cma_possible() && ((prefer_single_ && bytes > geometry_.chunk) ||
                                 (single_wanted && bytes >= single_copy_min()));
  return t;
}

ShmTransfer NodeChannels::recv(int peer, std::uint64_t msg, void* data, std::size_t bytes) {
  ShmTransfer t;
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
  error_ = std::move(why);
  error = error_;
  step_ = Step::finished;
  return state_;
}

// Message m may use slot m % slots once the receiver completed message m - slots there.
bool ShmTransfer::slot_free() const {
  const auto slots = static_cast<std::uint64_t>(ch_->geometry_.slots);
  return static_cast<const SlotCtl*>(slot_)->recv_done.v.load(acq) + slots >= tag_;
}

XferState ShmTransfer::test(std::string& error) {
  if (state_ == XferState::failed) error = error_;
  if (state_ != XferState::pending) return state_;
  return is_send_ ? advance_send(error) : advance_recv(error);
}

void ShmTransfer::withdraw(std::chrono::steady_clock::time_point deadline) {
  if (is_send_ || state_ != XferState::pending) return;
  if (step_ != Step::recv_wait_post && step_ != Step::recv_wait_push) return;
  auto* s = static_cast<SlotCtl*>(slot_);
  state_ = XferState::failed;
  step_ = Step::finished;
  error_ = "withdrawn after the call failed";
  if (s->recv_posted.v.load(acq) != tag_) return;  // never published: nobody writes here
  std::uint64_t claim = 0;
  if (s->claim.v.compare_exchange_strong(claim, tag_ | kWithdrawn, std::memory_order_acq_rel)) {
    return;  // taken back before the sender claimed it
  }
  // The sender claimed the destination: its write is under way or over. It ends with send_done
  // (written), error (its write failed) or its death.
  while (s->send_done.v.load(acq) != tag_ && s->error.v.load(acq) != tag_ &&
         ch_->peer_alive(peer_) && std::chrono::steady_clock::now() < deadline) {
    sched_yield();
  }
}

XferState ShmTransfer::advance_send(std::string& error) {
  auto* s = static_cast<SlotCtl*>(slot_);
  char* buf = buffer_of(slot_);
  const std::size_t chunk = ch_->geometry_.chunk;
  for (;;) {
    switch (step_) {
      case Step::wait_slot:
        if (!slot_free()) return XferState::pending;
        s->bytes = bytes_;
        s->single = single_ ? 1 : 0;  // every message sets it: the slot held another one before
        if (bytes_ <= chunk && !single_) {
          if (bytes_ > 0) std::memcpy(buf, data_, bytes_);
          s->posted.v.store(tag_, rel);
          step_ = Step::finished;
          return state_ = XferState::done;
        }
        s->src_addr = reinterpret_cast<std::uint64_t>(data_);
        if (single_) {
          s->posted.v.store(tag_, rel);
          step_ = Step::send_wait_recv;
        } else {
          s->written.v.store(0, std::memory_order_relaxed);
          s->read.v.store(0, std::memory_order_relaxed);
          s->posted.v.store(tag_, rel);
          chunk_index_ = 0;
          step_ = Step::send_staged;
        }
        break;
      case Step::send_wait_recv: {
        if (s->error.v.load(acq) == tag_) return fail(error, "the receiver rejected the message");
        if (s->recv_posted.v.load(acq) != tag_) return XferState::pending;
        if (s->dst_bytes != bytes_) {  // never write past the receiver's buffer
          s->error.v.store(tag_, rel);
          size_mismatch_ = true;
          return fail(error, "the receiver expects " + std::to_string(s->dst_bytes) +
                                 " bytes, not " + std::to_string(bytes_));
        }
        // The destination is the receiver's until it withdraws it: claim it first, so that a
        // receiver whose call failed either took it back (and nothing is written) or waits for
        // this write to end (ShmTransfer::withdraw).
        std::uint64_t unclaimed = 0;
        if (!s->claim.v.compare_exchange_strong(unclaimed, tag_, std::memory_order_acq_rel)) {
          return fail(error, "the receiver gave the message up (its call failed)");
        }
        const std::size_t push = ch_->push_bytes(bytes_);
        std::string why;
        if (push > 0 && !cma_write(ch_->pid_of(peer_), data_, reinterpret_cast<void*>(s->dst_addr),
                                   push, why)) {
          peer_gone_ = errno == ESRCH;
          s->error.v.store(tag_, rel);
          return fail(error, why);
        }
        s->send_done.v.store(tag_, rel);
        step_ = Step::send_wait_done;
        break;
      }
      case Step::send_wait_done:
        if (s->error.v.load(acq) == tag_) return fail(error, "the receiver rejected the message");
        if (s->recv_done.v.load(acq) < tag_) return XferState::pending;
        step_ = Step::finished;
        return state_ = XferState::done;
      case Step::send_staged: {
        const std::size_t chunks = (bytes_ + chunk - 1) / chunk;
        while (chunk_index_ < chunks) {
          if (s->error.v.load(acq) == tag_) return fail(error, "the receiver rejected the message");
          // Chunk c reuses the half of chunk c - 2: wait until that one was read.
          if (s->read.v.load(acq) + 1 < chunk_index_) return XferState::pending;
          const std::size_t off = chunk_index_ * chunk;
          std::memcpy(buf + (chunk_index_ % 2) * chunk, data_ + off, std::min(chunk, bytes_ - off));
          ++chunk_index_;
          s->written.v.store(chunk_index_, rel);
        }
        step_ = Step::finished;
        return state_ = XferState::done;
      }
      default:
        return fail(error, "internal: bad send step");
    }
  }
}

XferState ShmTransfer::advance_recv(std::string& error) {
  auto* s = static_cast<SlotCtl*>(slot_);
  char* buf = buffer_of(slot_);
  const std::size_t chunk = ch_->geometry_.chunk;
  for (;;) {
    switch (step_) {
      case Step::wait_slot:
        if (!slot_free()) return XferState::pending;
        // Where the sender may choose single copy, the destination is published in advance: the
        // sender's push need not wait for a second round trip.
        if (bytes_ >= ch_->single_copy_min() && ch_->cma_possible()) {
          s->dst_addr = reinterpret_cast<std::uint64_t>(data_);
          s->dst_bytes = bytes_;
          s->claim.v.store(0, std::memory_order_relaxed);  // published by the release below
          s->recv_posted.v.store(tag_, rel);
        }
        step_ = Step::recv_wait_post;
        break;
      case Step::recv_wait_post: {
        if (s->posted.v.load(acq) != tag_) return XferState::pending;
        if (s->bytes != bytes_) {
          s->error.v.store(tag_, rel);
          size_mismatch_ = true;
          return fail(error, "a local peer sent " + std::to_string(s->bytes) + " bytes where " +
                                 std::to_string(bytes_) +
                                 " were expected (do all ranks pass the same sizes? "
                                 "LANES_CHECK=1 tells)");
        }
        if (bytes_ <= chunk && s->single == 0) {
          if (bytes_ > 0) std::memcpy(data_, buf, bytes_);
          s->recv_done.v.store(tag_, rel);
          step_ = Step::finished;
          return state_ = XferState::done;
        }
        if (s->single != 0) {
          if (!ch_->cma_possible()) return fail(error, "internal: single copy where CMA fails");
          const std::size_t push = ch_->push_bytes(bytes_);
          std::string why;
          if (!cma_read(ch_->pid_of(peer_), data_ + push,
                        reinterpret_cast<const char*>(s->src_addr) + push, bytes_ - push, why)) {
            peer_gone_ = errno == ESRCH;
            s->error.v.store(tag_, rel);
            return fail(error, why);
          }
          step_ = Step::recv_wait_push;
        } else {
          chunk_index_ = 0;
          step_ = Step::recv_staged;
        }
        break;
      }
      case Step::recv_wait_push:
        if (s->send_done.v.load(acq) != tag_) {
          if (s->error.v.load(acq) == tag_) return fail(error, "the sender failed to push data");
          return XferState::pending;
        }
        s->recv_done.v.store(tag_, rel);
        step_ = Step::finished;
        return state_ = XferState::done;
      case Step::recv_staged: {
        const std::size_t chunks = (bytes_ + chunk - 1) / chunk;
        while (chunk_index_ < chunks) {
          if (s->written.v.load(acq) < chunk_index_ + 1) return XferState::pending;
          const std::size_t off = chunk_index_ * chunk;
          std::memcpy(data_ + off, buf + (chunk_index_ % 2) * chunk, std::min(chunk, bytes_ - off));
          ++chunk_index_;
          s->read.v.store(chunk_index_, rel);
        }
        s->recv_done.v.store(tag_, rel);
        step_ = Step::finished;
        return state_ = XferState::done;
      }
      default:
        return fail(error, "internal: bad receive step");
    }
  }
}

}  // namespace lanes::transport
