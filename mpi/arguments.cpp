#include "mpi/arguments.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "mpi/datatypes.hpp"
#include "mpi/state.hpp"

namespace lanes::mpi_interpose {

namespace {

// Whether MPI takes `type` for communication: predefined, or derived and committed. MPI has no
// query for the commit state, so an MPI_Pack of no elements asks (the MPI library fails it with
// MPI_ERR_TYPE for an uncommitted datatype), on a communicator whose errors return.
bool committed(MPI_Datatype type, const TypeShape& shape) {
  if (shape.named) return true;
  const MPI_Comm quiet = quiet_self();
  if (quiet == MPI_COMM_NULL) return true;  // lanes is off: the MPI library checks its calls
  char in = 0, out = 0;
  int position = 0;
  return PMPI_Pack(&in, 0, type, &out, 0, &position, quiet) == MPI_SUCCESS;
}

// a * b * c when it is below 2^63, else nullopt.
std::optional<MPI_Count> product(MPI_Count a, MPI_Count b, MPI_Count c) {
  MPI_Count ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return std::nullopt;
  return abc;
}

}  // namespace

Arguments::Arguments(MPI_Comm comm) {
  PMPI_Comm_rank(comm, &rank_);
  PMPI_Comm_size(comm, &size_);
}

void Arguments::fail(int error_class, std::string what) {
  if (!error_) error_ = ArgumentError{error_class, std::move(what)};
}

void Arguments::root(int root) {
  if (error_) return;
  if (root < 0 || root >= size_) {
    fail(MPI_ERR_ROOT, "root " + std::to_string(root) +
                           " is not a rank of the communicator (0 to " + std::to_string(size_ - 1) +
                           ")");
  }
}

void Arguments::op(MPI_Op op) {
  if (error_) return;
  if (op == MPI_OP_NULL) fail(MPI_ERR_OP, "op is MPI_OP_NULL");
}

void Arguments::vdata(const char* buffer_name, const void* buffer, const char* counts_name,
                      const int* counts, const char* displs_name, const int* displs,
                      const char* type_name, MPI_Datatype type) {
  if (error_) return;
  if (counts == nullptr || displs == nullptr) {
    return fail(MPI_ERR_ARG,
                std::string(counts == nullptr ? counts_name : displs_name) + " is a null pointer");
  }
  int largest = 0;
  for (int i = 0; i < size_; ++i) {
    if (counts[i] < 0) {
      return fail(MPI_ERR_COUNT, std::string(counts_name) + "[" + std::to_string(i) + "] is " +
                                     std::to_string(counts[i]) + ": counts are never negative");
    }
    largest = std::max(largest, counts[i]);
  }
  data(buffer_name, buffer, counts_name, largest, type_name, type);
}

void Arguments::request(const MPI_Request* request) {
  if (error_) return;
  if (request == nullptr) fail(MPI_ERR_ARG, "request is a null pointer");
}

void Arguments::data(const char* buffer_name, const void* buffer, const char* count_name, int count,
                     const char* type_name, MPI_Datatype type, int blocks) {
  if (error_) return;
  // The names become strings only for a message: this runs on every call.
  const auto name = [](const char* s) { return std::string(s); };
  if (type == MPI_DATATYPE_NULL)
    return fail(MPI_ERR_TYPE, name(type_name) + " is MPI_DATATYPE_NULL");
  if (count < 0) {
    return fail(MPI_ERR_COUNT,
                name(count_name) + " is " + std::to_string(count) + ": counts are never negative");
  }
  const TypeShape shape = type_shape(type);
  if (!committed(type, shape)) {
    return fail(MPI_ERR_TYPE, name(type_name) +
                                  " is a derived datatype that is not committed: call "
                                  "MPI_Type_commit first");
  }
  if (buffer == MPI_IN_PLACE) {
    return fail(MPI_ERR_BUFFER,
                name(buffer_name) + " is MPI_IN_PLACE, which this rank may not pass there");
  }
  if (!shape.known) {
    return fail(MPI_ERR_TYPE,
                name(type_name) + ": the MPI library cannot give its size and extent");
  }
  const MPI_Count size = shape.size, extent = shape.extent;
  // The bytes of data and the span of memory the blocks cover must fit in an address.
  const MPI_Count stride = extent < 0 ? -extent : extent;
  if (!product(count, size, blocks) || !product(count, stride, blocks)) {
    return fail(MPI_ERR_COUNT,
                name(count_name) + " " + std::to_string(count) + " of " + name(type_name) + " (" +
                    std::to_string(size) + " bytes, extent " + std::to_string(extent) + ") in " +
                    std::to_string(blocks) + " block(s) is more memory than an address reaches");
  }
  // A null pointer is MPI_BOTTOM: a valid buffer only for a datatype of absolute addresses,
  // whose data does not start at address 0.
  if (buffer == nullptr && count > 0 && size > 0 && shape.true_lb == 0) {
    return fail(MPI_ERR_BUFFER, name(buffer_name) + " is a null pointer but " + name(count_name) +
                                    " is " + std::to_string(count) + " elements of " +
                                    std::to_string(size) + " bytes");
  }
}

}  // namespace lanes::mpi_interpose
