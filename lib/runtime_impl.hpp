// RuntimeImpl: what one process owns for the life of a lanes::Runtime: the configuration, the
// bootstrap, the UCX rails, the world communicator and the progress loop.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <lanes/runtime.hpp>

#include "algos/cost_model.hpp"
#include "algos/layout.hpp"
#include "lib/config.hpp"
#include "lib/rules.hpp"
#include "transport/bootstrap/bootstrap.hpp"
#include "transport/ucx/rails.hpp"

namespace lanes::detail {

class CommImpl;
class Execution;

// What rank r told everyone at start-up.
struct PeerRecord {
  std::string node_key;
  int launcher_local_rank = -1;
  int numa = -1;
  int cores = 1;
  std::vector<std::string> rails;
};

class RuntimeImpl : public std::enable_shared_from_this<RuntimeImpl> {
 public:
  static Runtime start(std::unique_ptr<transport::Bootstrap> bootstrap);
  ~RuntimeImpl();

  const Config& config() const { return config_; }
  transport::Rails& rails() { return *rails_; }
  bool finalized() const { return finalized_; }
  const std::string& bootstrap_name() const { return bootstrap_name_; }
  ProgressMode progress_mode() const { return progress_; }
  const algos::MachineParams& machine() const { return machine_; }
  const Rules& rules() const { return rules_; }
  std::shared_ptr<CommImpl> world() const { return world_; }
  std::string describe() const;

  // Started executions are progressed together: waiting for one advances all.
  void activate(std::shared_ptr<Execution> ex);
  // One pass over the rails and every active execution; true when anything moved.
  bool progress();
  // Runs until `ex` finished, with the configured progress mode; throws lanes::Error if it failed.
  void wait(Execution& ex);
  // One progress pass; true when `ex` finished; throws lanes::Error if it failed.
  bool test(Execution& ex);

  // Communicator ids: every process keeps the next free id; a split takes the maximum over the
  // parent's members, so an id is never in use by any member.
  std::uint32_t next_comm_id() const { return next_comm_id_; }
  void claim_comm_id(std::uint32_t id) { next_comm_id_ = id + 1; }
  void track(const std::shared_ptr<CommImpl>& comm);

  void finalize() noexcept;
  // Throws lanes::Error(finalized) after finalize().
  void check_alive() const;

 private:
  RuntimeImpl() = default;
  void init(std::unique_ptr<transport::Bootstrap> bootstrap);
  void connect_off_node_peers(const algos::Layout& layout, int rank);
  // Local peers alive? LANES_TIMEOUT passed? Fails the executions concerned.
  void check_stalled(std::chrono::steady_clock::time_point last_progress);
  void idle();  // what a waiting process does when nothing moved (LANES_PROGRESS)

  Config config_;
  std::string bootstrap_name_;
  std::unique_ptr<transport::Bootstrap> bootstrap_;
  std::unique_ptr<transport::Rails> rails_;
  std::shared_ptr<CommImpl> world_;
  std::vector<std::weak_ptr<CommImpl>> comms_;
  std::vector<std::shared_ptr<Execution>> active_;
  std::vector<PeerRecord> peers_;
  ProgressMode progress_ = ProgressMode::spin;
  algos::MachineParams machine_;
  Rules rules_;
  std::uint32_t next_comm_id_ = 1;
  bool started_ = false;  // init completed: finalize synchronises with the peers
  bool finalized_ = false;
};

}  // namespace lanes::detail
