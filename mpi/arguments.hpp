// Local checks of an MPI collective's arguments, made before lanes communicates at all: the
// first erroneous argument of this rank gives the error class MPI prescribes (MPI_ERR_ROOT,
// MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP, MPI_ERR_BUFFER) and a message naming it. Each call
// checks only the arguments the standard makes significant on this rank (a scatter's send
// buffer at the root alone, none of the receive arguments at a root that passes MPI_IN_PLACE).
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

namespace lanes::mpi_interpose {

struct ArgumentError {
  int error_class;   // MPI_ERR_*
  std::string what;  // the argument and what is wrong with it
};

class Arguments {
 public:
  explicit Arguments(MPI_Comm comm);
  Arguments(int rank, int size) : rank_(rank), size_(size) {}  // both known already
  int rank() const { return rank_; }
  int size() const { return size_; }

  // `root` names a rank of the communicator: MPI_ERR_ROOT otherwise.
  void root(int root);
  // A buffer of `blocks` blocks of `count` elements of `type`, read or written here. The datatype
  // is not MPI_DATATYPE_NULL and is committed (MPI_ERR_TYPE); the count is not negative and the
  // blocks' bytes fit in an address (MPI_ERR_COUNT); the buffer is not MPI_IN_PLACE (callers skip
  // the check where the standard allows it) and not a null pointer with data at offset 0 on
  // (MPI_ERR_BUFFER; MPI_BOTTOM with a datatype of absolute addresses is a valid buffer).
  void data(const char* buffer_name, const void* buffer, const char* count_name, int count,
            const char* type_name, MPI_Datatype type, int blocks = 1);
  // A v-collective's buffer: `counts` and `displs` hold size() entries (not null: MPI_ERR_ARG),
  // no count is negative, and the buffer is valid for the largest block (as data()).
  // Displacements may be anything, negative ones too.
  void vdata(const char* buffer_name, const void* buffer, const char* counts_name,
             const int* counts, const char* displs_name, const int* displs, const char* type_name,
             MPI_Datatype type);
  // A nonblocking call's request argument is not a null pointer (MPI_ERR_ARG).
  void request(const MPI_Request* request);
  // A reduction's operation is not MPI_OP_NULL (MPI_ERR_OP).
  void op(MPI_Op op);

  // The first error found, if any.
  const std::optional<ArgumentError>& error() const { return error_; }

 private:
  void fail(int error_class, std::string what);

  int rank_ = 0;
  int size_ = 0;
  std::optional<ArgumentError> error_;
};

}  // namespace lanes::mpi_interpose
