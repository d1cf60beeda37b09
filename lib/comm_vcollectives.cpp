// The v-variants of a communicator: scatterv, gatherv, allgatherv and alltoallv. Their schedules
// come from algos/ (valgorithms.def) and are built per call from the blocks; the executor runs
// them like any other.
#include <cstdio>
#include <cstring>
#include <lanes/error.hpp>

#include "lib/comm_impl.hpp"
#include "lib/executor.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes::detail {

using algos::VCollective;

namespace {

// What every rank tells the others before a v-collective; `kUnknownSize`-padded block sizes
// follow it (v_sizes).
struct VSignature {
  std::uint32_t coll;
  std::int32_t root;
  std::int32_t lanes;
  std::int32_t first_rail;
  std::uint32_t has_error;
  std::uint32_t unused;
  char algorithm[32];
};

std::string describe(const VSignature& s) {
  const auto coll = static_cast<VCollective>(s.coll);
  std::string text = std::string(algos::to_string(coll)) + "(";
  if (algos::is_rooted(coll)) text += "root " + std::to_string(s.root) + ", ";
  if (s.lanes != 0 || s.first_rail != 0) {
    text += std::to_string(s.lanes) + " lanes from rail " + std::to_string(s.first_rail) + ", ";
  }
  return text + "algorithm " + s.algorithm + ")";
}

// The algorithm a call names, or the collective's default (the first in valgorithms.def).
const algos::VAlgorithm* choose(VCollective coll, const std::string& requested,
                                std::string& error) {
  if (requested.empty() || requested == "auto") return algos::valgorithms_for(coll).front();
  if (const algos::VAlgorithm* a = algos::find_valgorithm(coll, requested)) return a;
  error = std::string(algos::to_string(coll)) + ": unknown algorithm '" + requested +
          "' (known: " + algos::valgorithm_names(coll) + ")";
  return nullptr;
}

// The first pair of block ends that disagree, described; empty when all agree. `rows[r]` is
// rank r's v_sizes.
std::string size_mismatch(const algos::VArgs& args,
                          const std::vector<std::vector<std::uint64_t>>& rows) {
  const auto p = rows.size();
  const auto bytes = [](std::uint64_t b) { return std::to_string(b) + " bytes"; };
  if (args.coll == VCollective::alltoallv) {
    for (std::size_t i = 0; i < p; ++i) {
      for (std::size_t j = 0; j < p; ++j) {
        if (rows[i][j] != rows[j][p + i]) {
          return "rank " + std::to_string(i) + " sends rank " + std::to_string(j) + " " +
                 bytes(rows[i][j]) + " but rank " + std::to_string(j) + " expects " +
                 bytes(rows[j][p + i]) + " from it";
        }
      }
    }
    return {};
  }
  // The root's sizes (rank 0's for allgatherv) against every size another rank knows.
  const auto ref = static_cast<std::size_t>(algos::is_rooted(args.coll) ? args.root : 0);
  for (std::size_t r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < p; ++i) {
      if (rows[r][i] == kUnknownSize || rows[r][i] == rows[ref][i]) continue;
      return "rank " + std::to_string(ref) + " gives rank " + std::to_string(i) + "'s block as " +
             bytes(rows[ref][i]) + " but rank " + std::to_string(r) + " as " + bytes(rows[r][i]);
    }
  }
  return {};
}

}  // namespace

void CommImpl::agree_v(algos::VArgs& args, const std::string& algorithm, const CallOptions& options,
                       const std::string& local_error) {
  const auto p = static_cast<std::size_t>(size());
  const std::size_t record = sizeof(VSignature) + 2 * p * sizeof(std::uint64_t);
  std::vector<std::byte> mine(record);
  VSignature sig{};
  sig.coll = static_cast<std::uint32_t>(args.coll);
  sig.root = args.root;
  sig.lanes = options.lanes;
  sig.first_rail = options.first_rail;
  sig.has_error = local_error.empty() ? 0 : 1;
  std::snprintf(sig.algorithm, sizeof sig.algorithm, "%s", algorithm.c_str());
  std::memcpy(mine.data(), &sig, sizeof sig);
  const std::vector<std::uint64_t> sizes = v_sizes(args, size());
  std::memcpy(mine.data() + sizeof sig, sizes.data(), sizes.size() * sizeof(std::uint64_t));
  std::vector<std::byte> all(record * p);
  exchange(mine.data(), all.data(), record);

  std::vector<VSignature> sigs(p);
  std::vector<std::vector<std::uint64_t>> rows(p, std::vector<std::uint64_t>(2 * p));
  for (std::size_t r = 0; r < p; ++r) {
    std::memcpy(&sigs[r], all.data() + r * record, sizeof(VSignature));
    std::memcpy(rows[r].data(), all.data() + r * record + sizeof(VSignature),
                2 * p * sizeof(std::uint64_t));
  }
  const char* coll = algos::to_string(args.coll);
  for (std::size_t r = 0; r < p; ++r) {
    if (sigs[r].has_error == 0) continue;
    throw Error(Errc::invalid_argument, static_cast<int>(r) == rank_
                                            ? "rank " + std::to_string(r) + ": " + local_error
                                            : "rank " + std::to_string(r) +
                                                  " passed invalid arguments to " + coll +
                                                  " (its error says which)");
  }
  const VSignature& ref = sigs.front();
  for (std::size_t r = 1; r < p; ++r) {
    const VSignature& s = sigs[r];
    if (s.coll != ref.coll || s.root != ref.root || s.lanes != ref.lanes ||
        s.first_rail != ref.first_rail ||
        std::strncmp(s.algorithm, ref.algorithm, sizeof s.algorithm) != 0) {
      throw Error(Errc::mismatch, "collective mismatch: rank 0 called " + describe(ref) +
                                      " but rank " + std::to_string(r) + " called " + describe(s));
    }
  }
  if (const std::string why = size_mismatch(args, rows); !why.empty()) {
    throw Error(Errc::mismatch, std::string(coll) + " size mismatch: " + why);
  }
  // The root's sizes, for an algorithm that reads every block at every rank.
  if (algos::is_rooted(args.coll)) {
    const auto& root_row = rows[static_cast<std::size_t>(args.root)];
    for (std::size_t i = 0; i < p; ++i) args.blocks[i].bytes = root_row[i];
  }
}

std::shared_ptr<Execution> CommImpl::start_v(const VSpec& spec, const CallOptions& options) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  VCheck checked = check_vcall(spec, rank_, size());
  std::string error = checked.error;
  const VCollective coll = checked.args.coll;
  const algos::VAlgorithm* algo = choose(coll, options.algorithm, error);
  const algos::Layout* layout = nullptr;
  try {
    layout = &layout_with_lanes(options.lanes, options.first_rail);
  } catch (const Error& e) {
    if (e.code() != Errc::invalid_argument) throw;
    if (error.empty()) error = std::string(algos::to_string(coll)) + ": " + e.what();
  }
  // The exchange must run on every rank alike: it depends only on what every rank is called with.
  const bool sizes_needed = algos::is_rooted(coll) && algo != nullptr && !algo->local;
  if (runtime_->config().check || sizes_needed) {
    agree_v(checked.args, algo != nullptr ? std::string(algo->name) : options.algorithm, options,
            error);
  } else if (!error.empty()) {
    throw Error(Errc::invalid_argument, error);
  }
  algos::Schedule sched = algo->build(*layout, checked.args);
  sched.finalize();
  if (runtime_->config().info > 0 && rank_ == 0) {
    std::fprintf(stderr, "lanes: %s, root %d on %s: %s\n", algos::to_string(coll),
                 checked.args.root, layout->describe().c_str(), std::string(algo->name).c_str());
  }
  // Launched even with no ops here (a binomial tree skips empty subtrees): every execution
  // claims the communicator's next sequence number, on every rank alike.
  auto prepared = prepare(*this, std::move(sched), std::string(algo->name), layout->first_rail);
  return launch(std::move(prepared), spec.send.data(), spec.recv.data(), {}, 1);
}

void CommImpl::run_v(const VSpec& spec, const CallOptions& options) {
  auto ex = start_v(spec, options);
  if (ex) finish(std::move(ex));
}

}  // namespace lanes::detail
