// Bootstrap from an MPI communicator. Only PMPI_* entry points are called, so an interposition
// layer that routes MPI collectives into lanes does not see (or recurse into) this traffic.
#include "transport/bootstrap/mpi_bootstrap.hpp"

#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

#include "lanes/error.hpp"

namespace lanes::transport {

namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  if (PMPI_Error_string(code, text, &len) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

void check(int code, const char* call) {
  if (code != MPI_SUCCESS) {
    throw Error(Errc::bootstrap, std::string("MPI bootstrap: ") + call +
                                     " failed: " + mpi_error_text(code) +
                                     "; check that every rank of the communicator takes part");
  }
}

// Owns a communicator and frees it while MPI is still usable.
class CommHandle {
 public:
  CommHandle() = default;
  ~CommHandle() {
    if (comm_ != MPI_COMM_NULL && mpi_active()) {
      const int rc = PMPI_Comm_free(&comm_);
      if (rc != MPI_SUCCESS) {
        std::fprintf(stderr, "lanes: MPI bootstrap: MPI_Comm_free failed: %s\n",
                     mpi_error_text(rc).c_str());
      }
    }
  }
  CommHandle(const CommHandle&) = delete;
  CommHandle& operator=(const CommHandle&) = delete;

  MPI_Comm get() const { return comm_; }
  MPI_Comm* out() { return &comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Owns a committed datatype.
class TypeHandle {
 public:
  TypeHandle() = default;
  ~TypeHandle() {
    if (type_ != MPI_DATATYPE_NULL && mpi_active()) PMPI_Type_free(&type_);
  }
  TypeHandle(const TypeHandle&) = delete;
  TypeHandle& operator=(const TypeHandle&) = delete;

  MPI_Datatype get() const { return type_; }
  MPI_Datatype* out() { return &type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(MPI_Comm comm) {
    // The dup keeps lanes' messages apart from the application's; errors on it come back as
    // return codes instead of aborting the job.
    check(PMPI_Comm_dup(comm, comm_.out()), "MPI_Comm_dup");
    check(PMPI_Comm_set_errhandler(comm_.get(), MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(PMPI_Comm_rank(comm_.get(), &rank_), "MPI_Comm_rank");
    check(PMPI_Comm_size(comm_.get(), &size_), "MPI_Comm_size");

    check(PMPI_Comm_split_type(comm_.get(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node_.out()),
          "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
    check(PMPI_Comm_set_errhandler(node_.get(), MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(PMPI_Comm_rank(node_.get(), &placement_.local_rank), "MPI_Comm_rank(node)");
    check(PMPI_Comm_size(node_.get(), &placement_.local_size), "MPI_Comm_size(node)");

    // Name the node after the rank (in comm) of its first process: the same on every process of
    // the node, different between nodes, with no host-name lookups.
    int leader = rank_;
    check(PMPI_Bcast(&leader, 1, MPI_INT, 0, node_.get()), "MPI_Bcast(node leader)");
    placement_.node_key = "mpi-node-" + std::to_string(leader);
  }

  const char* name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Placement placement() const override { return placement_; }

  void allgather(const void* mine, void* all, std::size_t bytes) override {
    // A zero-count MPI_Allgather may return at once; a barrier keeps the meaning the other
    // bootstraps give an empty round.
    if (bytes == 0) {
      check(PMPI_Barrier(comm_.get()), "MPI_Barrier");
      return;
    }
    // MPI_IN_PLACE when the caller's block already sits at its slot; MPI forbids aliasing.
    const void* send = mine;
    if (mine == static_cast<unsigned char*>(all) + static_cast<std::size_t>(rank_) * bytes) {
      send = MPI_IN_PLACE;
    }
    if (bytes <= static_cast<std::size_t>(INT_MAX)) {
      const int count = static_cast<int>(bytes);
      check(PMPI_Allgather(send, count, MPI_BYTE, all, count, MPI_BYTE, comm_.get()),
            "MPI_Allgather");
      return;
    }
    // MPI counts are int: describe one block as a single datatype of exactly `bytes` bytes,
    // built from 1 GiB chunks and the remainder.
    constexpr std::size_t kChunk = std::size_t{1} << 30;
    if (bytes / kChunk > static_cast<std::size_t>(INT_MAX)) {
      throw Error(Errc::invalid_argument, "MPI bootstrap: allgather of " + std::to_string(bytes) +
                                              " bytes per rank is too large for MPI");
    }
    const auto chunks = static_cast<int>(bytes / kChunk);
    const auto rest = static_cast<int>(bytes % kChunk);
    TypeHandle chunk;
    check(PMPI_Type_contiguous(static_cast<int>(kChunk), MPI_BYTE, chunk.out()),
          "MPI_Type_contiguous");
    int lengths[2] = {chunks, rest};
    MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(static_cast<std::size_t>(chunks) * kChunk)};
    MPI_Datatype types[2] = {chunk.get(), MPI_BYTE};
    TypeHandle block;
    check(PMPI_Type_create_struct(2, lengths, displs, types, block.out()),
          "MPI_Type_create_struct");
    TypeHandle sized;
    check(PMPI_Type_create_resized(block.get(), 0, static_cast<MPI_Aint>(bytes), sized.out()),
          "MPI_Type_create_resized");
    check(PMPI_Type_commit(sized.out()), "MPI_Type_commit");
    check(PMPI_Allgather(send, 1, sized.get(), all, 1, sized.get(), comm_.get()), "MPI_Allgather");
  }

 private:
  CommHandle comm_;
  CommHandle node_;
  int rank_ = 0;
  int size_ = 0;
  Placement placement_;
};

}  // namespace

bool mpi_active() {
  int initialized = 0;
  int finalized = 0;
  if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return false;
  if (PMPI_Finalized(&finalized) != MPI_SUCCESS) return false;
  return !finalized;
}

std::unique_ptr<Bootstrap> make_mpi_bootstrap(MPI_Comm comm) {
  if (!mpi_active()) {
    throw Error(Errc::bootstrap,
                "make_mpi_bootstrap: MPI is not initialised (or already finalised); call "
                "MPI_Init before creating the MPI bootstrap and destroy it before MPI_Finalize");
  }
  if (comm == MPI_COMM_NULL) {
    throw Error(Errc::invalid_argument, "make_mpi_bootstrap: comm is MPI_COMM_NULL");
  }
  int inter = 0;
  check(PMPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
  if (inter) {
    throw Error(Errc::invalid_argument,
                "make_mpi_bootstrap: comm is an inter-communicator; pass an intra-communicator "
                "(for example the result of MPI_Intercomm_merge)");
  }
  return std::make_unique<MpiBootstrap>(comm);
}

}  // namespace lanes::transport
