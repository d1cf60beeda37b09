// Handles for collectives that run in the background: lanes::Request (one nonblocking call) and
// lanes::Plan (a persistent collective: arguments checked and schedule built once, started many
// times). The buffers passed at the call must stay valid and untouched until completion.
#pragma once

#include <memory>

namespace lanes {

class Request;
class Plan;

namespace detail {
class Execution;
struct PlanState;
Request make_request(std::shared_ptr<Execution> ex);
Plan make_plan(std::shared_ptr<PlanState> state);
}  // namespace detail

class Request {
 public:
  Request() = default;  // already complete
  // Progresses every collective of the runtime once; true when this one has completed.
  // Throws lanes::Error if it failed.
  bool test();
  // Progresses until this collective completed; throws lanes::Error if it failed.
  void wait();

 private:
  friend class Plan;
  friend Request detail::make_request(std::shared_ptr<detail::Execution> ex);
  explicit Request(std::shared_ptr<detail::Execution> ex) : ex_(std::move(ex)) {}
  std::shared_ptr<detail::Execution> ex_;
};

class Plan {
 public:
  Plan() = default;
  // Starts the collective (collective: every rank starts its plans in the same order as its
  // other collectives). Throws lanes::Error(invalid_argument) if the previous start is running.
  void start();
  bool test();
  void wait();

 private:
  friend Plan detail::make_plan(std::shared_ptr<detail::PlanState> state);
  explicit Plan(std::shared_ptr<detail::PlanState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::PlanState> state_;
};

}  // namespace lanes
