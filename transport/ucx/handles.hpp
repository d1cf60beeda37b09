// RAII owners of UCX handles. Destructors never throw.
#pragma once

#include <ucp/api/ucp.h>

#include <memory>
#include <string>

namespace lanes::transport {

struct UcpConfigDeleter {
  void operator()(ucp_config_t* c) const noexcept { ucp_config_release(c); }
};
using UcpConfig = std::unique_ptr<ucp_config_t, UcpConfigDeleter>;

struct UcpContextDeleter {
  void operator()(ucp_context_h c) const noexcept { ucp_cleanup(c); }
};
using UcpContext = std::unique_ptr<std::remove_pointer_t<ucp_context_h>, UcpContextDeleter>;

// Receives and drops the tagged messages that arrived for no receive (a peer's last control
// message, sent after this process's last call), so that destroying the worker does not make UCX
// log a warning for each of them on the program's stdout; bounded.
void drain_unexpected(ucp_worker_h w) noexcept;

struct UcpWorkerDeleter {
  void operator()(ucp_worker_h w) const noexcept {
    drain_unexpected(w);
    ucp_worker_destroy(w);
  }
};
using UcpWorker = std::unique_ptr<std::remove_pointer_t<ucp_worker_h>, UcpWorkerDeleter>;

// An endpoint is closed with a forced close and the worker progressed until the close completes
// (bounded), so that nothing is left referencing it.
class UcpEndpoint {
 public:
  UcpEndpoint() = default;
  UcpEndpoint(ucp_worker_h worker, ucp_ep_h ep) : worker_(worker), ep_(ep) {}
  UcpEndpoint(UcpEndpoint&& o) noexcept : worker_(o.worker_), ep_(o.ep_) { o.ep_ = nullptr; }
  UcpEndpoint& operator=(UcpEndpoint&& o) noexcept {
    if (this != &o) {
      close();
      worker_ = o.worker_;
      ep_ = o.ep_;
      o.ep_ = nullptr;
    }
    return *this;
  }
  UcpEndpoint(const UcpEndpoint&) = delete;
  UcpEndpoint& operator=(const UcpEndpoint&) = delete;
  ~UcpEndpoint() { close(); }

  ucp_ep_h get() const { return ep_; }
  explicit operator bool() const { return ep_ != nullptr; }
  void close() noexcept;

 private:
  ucp_worker_h worker_ = nullptr;
  ucp_ep_h ep_ = nullptr;
};

std::string ucs_error_text(ucs_status_t status);

}  // namespace lanes::transport
