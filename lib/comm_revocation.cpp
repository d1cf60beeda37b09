// Revocation: a member's failure in a collective makes the communicator unusable for all.
#include "lib/comm_impl.hpp"

#include <lanes/error.hpp>

#include "lib/runtime_impl.hpp"

namespace lanes::detail {

void CommImpl::revoke(Errc code, const std::string& why) {
  if (!broken_.empty()) return;  // told already, or learnt from the member that failed first
  broken_ = why;
  broken_code_ = code;
  if (channels_)
    channels_->revoke(static_cast<std::uint32_t>(code), static_cast<std::uint32_t>(rank_));
  if (layout_.num_nodes() == 1) return;
  const std::uint64_t tag = transport::make_control_tag(id_, static_cast<std::uint32_t>(rank_));
  for (int r = 0; r < size(); ++r) {
    if (!layout_.same_node(r, rank_)) {
      runtime_->send_control(world_rank(r), tag, static_cast<std::uint32_t>(code),
                             static_cast<std::uint32_t>(rank_));
    }
  }
}

bool CommImpl::revoked_by_peer(Errc& code, std::string& why) {
  std::uint32_t c = 0, by = 0;
  bool seen = channels_ && channels_->revoked(c, by) && static_cast<int>(by) != rank_;
  if (!seen && revocation_in_.armed()) {
    std::string ignored;
    if (revocation_in_.test(ignored) == transport::XferState::done) {
      c = revocation_msg_[0];
      by = revocation_msg_[1];
      seen = true;
      if (channels_) channels_->revoke(c, by);  // this node's members learn it from here
    }
  }
  if (!seen) return false;
  code = static_cast<Errc>(c);
  why = "rank " + std::to_string(by) + " failed a call on this communicator (" + to_string(code) +
        "), which revokes it";
  if (broken_.empty()) {
    broken_ = why;
    broken_code_ = code;
  }
  return true;
}

void CommImpl::arm_revocation() {
  if (layout_.num_nodes() == 1 || revocation_in_.armed()) return;
  revocation_in_ = runtime_->rails().recv_any(0, transport::make_control_tag(id_, 0),
                                              transport::kControlAnySource, revocation_msg_.data(),
                                              sizeof revocation_msg_);
}

void CommImpl::check_usable() const {
  runtime_->check_alive();
  if (!broken_.empty()) {
    throw Error(broken_code_,
                "this communicator is unusable after an earlier failure (" + broken_ + ")");
  }
}

void CommImpl::release() noexcept {
  revocation_in_ = transport::RailRequest();
  spare_.reset();
  channels_.reset();
  call_cache_.clear();
  cache_.clear();
}

}  // namespace lanes::detail
