// LANES_CHECK: every member's call signature compared with rank 0's before anything moves.
#include "lib/comm_impl.hpp"

#include <cstdio>
#include <cstring>
#include <lanes/error.hpp>

namespace lanes::detail {

using algos::Collective;

// ---------------------------------------------------------------------------------------------
namespace {

struct Signature {
  std::uint32_t coll;
  std::int32_t root;
  std::uint64_t bytes;
  std::uint32_t has_error;
  std::uint8_t type;  // reductions
  std::uint8_t op;
  std::uint8_t user;   // reductions: 0 a predefined operation, 1 a commutative user one, 2 another
  std::uint64_t elem;  // reductions with a user operation: its element size
  std::int32_t lanes;  // CallOptions::lanes and first_rail
  std::int32_t first_rail;
  std::int32_t groups;  // a hierarchical reduce's G where LANES_HIERARCHY_GROUPS names it
  char algorithm[32];
};

std::string describe_call(const Signature& s) {
  const auto coll = static_cast<Collective>(s.coll);
  const bool rooted = algos::is_rooted(coll);
  const bool vector =
      coll == Collective::bcast || coll == Collective::reduce || coll == Collective::allreduce;
  std::string text = std::string(algos::to_string(coll)) + "(";
  if (rooted) text += "root " + std::to_string(s.root) + ", ";
  if (coll != Collective::barrier) {
    text += std::to_string(s.bytes) + (vector ? " bytes" : " bytes per block") + ", ";
  }
  if (algos::is_reduction(coll) && s.user != 0) {
    text += std::string("a ") + (s.user == 1 ? "commutative" : "non-commutative") +
            " user operation of " + std::to_string(s.elem) + "-byte elements, ";
  } else if (algos::is_reduction(coll)) {
    text += std::string(to_string(static_cast<Op>(s.op))) + " of " +
            to_string(static_cast<Datatype>(s.type)) + ", ";
  }
  if (s.lanes != 0 || s.first_rail != 0) {
    text += std::to_string(s.lanes) + " lanes from rail " + std::to_string(s.first_rail) + ", ";
  }
  text += std::string("algorithm ") + s.algorithm;
  if (s.groups != 0) text += " with " + std::to_string(s.groups) + " groups";
  return text + ")";
}

}  // namespace

void CommImpl::agree(const Call& call, std::size_t bytes, const std::string& local_error,
                     int groups) {
  const Collective coll = call.coll;
  const std::string& algorithm = call.options.algorithm;
  Signature mine{};
  mine.coll = static_cast<std::uint32_t>(coll);
  mine.root = call.root;
  mine.bytes = bytes;
  if (algos::is_reduction(coll) && call.user_op) {
    // User operations compare by what they declare: their functions are this process's own.
    mine.user = call.user_op->commutative ? 1 : 2;
    mine.elem = call.user_op->elem_size;
  } else if (algos::is_reduction(coll)) {
    mine.type = static_cast<std::uint8_t>(call.type);
    mine.op = static_cast<std::uint8_t>(call.op);
  }
  mine.has_error = local_error.empty() ? 0 : 1;
  mine.lanes = call.options.lanes;
  mine.first_rail = call.options.first_rail;
  mine.groups = groups;
  std::snprintf(mine.algorithm, sizeof mine.algorithm, "%s", algorithm.c_str());
  std::vector<Signature> all(static_cast<std::size_t>(size()));
  exchange(&mine, all.data(), sizeof mine);
  for (int r = 0; r < size(); ++r) {
    if (all[static_cast<std::size_t>(r)].has_error != 0) {
      throw Error(Errc::invalid_argument,
                  r == rank_
                      ? "rank " + std::to_string(r) + ": " + local_error
                      : "rank " + std::to_string(r) + " passed invalid arguments to " +
                            algos::to_string(coll) + " (LANES_CHECK=1; its error says which)");
    }
  }
  const Signature& ref = all.front();
  for (int r = 1; r < size(); ++r) {
    const Signature& s = all[static_cast<std::size_t>(r)];
    if (s.coll != ref.coll || s.root != ref.root || s.bytes != ref.bytes || s.type != ref.type ||
        s.op != ref.op || s.user != ref.user || s.elem != ref.elem || s.lanes != ref.lanes ||
        s.first_rail != ref.first_rail || s.groups != ref.groups ||
        std::strncmp(s.algorithm, ref.algorithm, sizeof s.algorithm) != 0) {
      const bool kinds = s.coll == ref.coll && (s.user == 0) != (ref.user == 0);
      throw Error(
          Errc::mismatch,
          "collective mismatch (LANES_CHECK=1): rank 0 called " + describe_call(ref) +
              " but rank " + std::to_string(r) + " called " + describe_call(s) +
              (kinds ? " (a user operation on one rank, a predefined one on the other)" : ""));
    }
  }
}

}  // namespace lanes::detail
