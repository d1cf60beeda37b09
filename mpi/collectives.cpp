// The MPI entry points liblanes_mpi defines. Each asks whether lanes serves the call (the same
// answer on every rank of the communicator), checks this rank's arguments (mpi/arguments.hpp),
// turns the buffers into contiguous bytes and runs the lanes collective; otherwise it forwards
// to PMPI_*. MPI_Init and MPI_Finalize start and stop
// lanes around the MPI library's own.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <vector>

#include "mpi/arguments.hpp"
#include "mpi/checks.hpp"
#include "mpi/intercept.hpp"
#include "mpi/staging.hpp"
#include "mpi/state.hpp"

namespace {

using lanes::mpi_interpose::Arguments;
using lanes::mpi_interpose::Coll;
using lanes::mpi_interpose::copy_of;
using lanes::mpi_interpose::intercept;
using lanes::mpi_interpose::own_block;
using lanes::mpi_interpose::RecvBytes;
using lanes::mpi_interpose::SendBytes;
using lanes::mpi_interpose::TypedBuffer;

// The lanes element type of a predefined MPI datatype lanes reduces; nullopt for the others
// (derived types, pairs, characters, long double): those reductions go to the MPI library.
std::optional<lanes::Datatype> reduced_type(MPI_Datatype t) {
  using lanes::Datatype;
  const auto by_size = [](std::size_t bytes, bool is_signed) -> std::optional<Datatype> {
    switch (bytes) {
      case 1:
        return is_signed ? Datatype::int8 : Datatype::uint8;
      case 2:
        return is_signed ? Datatype::int16 : Datatype::uint16;
      case 4:
        return is_signed ? Datatype::int32 : Datatype::uint32;
      case 8:
        return is_signed ? Datatype::int64 : Datatype::uint64;
      default:
        return std::nullopt;
    }
  };
  if (t == MPI_FLOAT) return Datatype::float32;
  if (t == MPI_DOUBLE) return Datatype::float64;
  if (t == MPI_SIGNED_CHAR || t == MPI_INT8_T) return Datatype::int8;
  if (t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T) return Datatype::uint8;
  if (t == MPI_SHORT || t == MPI_INT16_T) return by_size(sizeof(short), true);
  if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T) return by_size(sizeof(short), false);
  if (t == MPI_INT || t == MPI_INT32_T) return by_size(sizeof(int), true);
  if (t == MPI_UNSIGNED || t == MPI_UINT32_T) return by_size(sizeof(unsigned), false);
  if (t == MPI_LONG) return by_size(sizeof(long), true);
  if (t == MPI_UNSIGNED_LONG) return by_size(sizeof(unsigned long), false);
  if (t == MPI_LONG_LONG || t == MPI_INT64_T) return by_size(sizeof(long long), true);
  if (t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T) return by_size(8, false);
  return std::nullopt;
}

std::optional<lanes::Op> reduced_op(MPI_Op op) {
  using lanes::Op;
  if (op == MPI_SUM) return Op::sum;
  if (op == MPI_PROD) return Op::prod;
  if (op == MPI_MIN) return Op::min;
  if (op == MPI_MAX) return Op::max;
  if (op == MPI_BAND) return Op::band;
  if (op == MPI_BOR) return Op::bor;
  if (op == MPI_BXOR) return Op::bxor;
  if (op == MPI_LAND) return Op::land;
  if (op == MPI_LOR) return Op::lor;
  if (op == MPI_LXOR) return Op::lxor;
  return std::nullopt;
}

// A reduction lanes serves: a predefined type and operation that apply to each other (the count
// is checked before, see Arguments). The same answer on every rank (MPI requires the same type,
// count and op).
struct Reduction {
  lanes::Datatype type;
  lanes::Op op;
  std::size_t bytes;
};
std::optional<Reduction> reduction_of(int count, MPI_Datatype type, MPI_Op op) {
  const auto t = reduced_type(type);
  const auto o = reduced_op(op);
  if (count < 0 || !t || !o) return std::nullopt;  // count: checked before, never taken here
  const bool floating = *t == lanes::Datatype::float32 || *t == lanes::Datatype::float64;
  if (floating && (*o == lanes::Op::band || *o == lanes::Op::bor || *o == lanes::Op::bxor)) {
    return std::nullopt;  // erroneous in MPI: let the MPI library report it
  }
  return Reduction{*t, *o, static_cast<std::size_t>(count) * lanes::size_of(*t)};
}

}  // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc != MPI_SUCCESS) return rc;
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  lanes::mpi_interpose::start(provided);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc != MPI_SUCCESS) return rc;
  lanes::mpi_interpose::start(*provided);
  return rc;
}

int MPI_Finalize(void) {
  lanes::mpi_interpose::stop();
  return PMPI_Finalize();
}

// Memory for the program's buffers from lanes' shared heap while lanes is on, which the node's
// processes read in place; the MPI library's otherwise.
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  if (size >= 0 && baseptr != nullptr) {
    if (void* p = lanes::mpi_interpose::allocate_memory(static_cast<std::size_t>(size))) {
      *static_cast<void**>(baseptr) = p;
      return MPI_SUCCESS;
    }
  }
  return PMPI_Alloc_mem(size, info, baseptr);
}

int MPI_Free_mem(void* base) {
  if (lanes::mpi_interpose::free_memory(base)) return MPI_SUCCESS;
  return PMPI_Free_mem(base);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return intercept(
      Coll::bcast, comm, "MPI_Bcast",
      [&](Arguments& a) { check_bcast(a, buffer, count, datatype, root); },
      [&](lanes::Communicator& lc) {
        const TypedBuffer b{buffer, count, datatype, 1};
        if (lc.rank() == root) {
          SendBytes data(b, comm);
          const std::span<const std::byte> in = data.bytes();
          // The root's data is only read.
          lc.bcast_bytes(std::span(const_cast<std::byte*>(in.data()), in.size()), root);
        } else {
          RecvBytes data(b, comm);
          lc.bcast_bytes(data.bytes(), root);
          data.finish();
        }
      },
      [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return intercept(
      Coll::scatter, comm, "MPI_Scatter",
      [&](Arguments& a) {
        check_scatter(a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
      },
      [&](lanes::Communicator& lc) {
        if (lc.rank() != root) {
          RecvBytes recv({recvbuf, recvcount, recvtype, 1}, comm);
          lc.scatter_bytes({}, recv.bytes(), root);
          recv.finish();
          return;
        }
        SendBytes send({sendbuf, sendcount, sendtype, lc.size()}, comm);
        if (recvbuf == MPI_IN_PLACE) {
          // The root's own block stays where it is: receive it into scratch.
          std::vector<std::byte> scratch(send.bytes().size() / static_cast<std::size_t>(lc.size()));
          lc.scatter_bytes(send.bytes(), scratch, root);
        } else {
          RecvBytes recv({recvbuf, recvcount, recvtype, 1}, comm);
          lc.scatter_bytes(send.bytes(), recv.bytes(), root);
          recv.finish();
        }
      },
      [&] {
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return intercept(
      Coll::gather, comm, "MPI_Gather",
      [&](Arguments& a) {
        check_gather(a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
      },
      [&](lanes::Communicator& lc) {
        if (lc.rank() != root) {
          SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
          lc.gather_bytes(send.bytes(), {}, root);
          return;
        }
        RecvBytes recv({recvbuf, recvcount, recvtype, lc.size()}, comm);
        if (sendbuf == MPI_IN_PLACE) {
          // The root's contribution already sits in its own block of recvbuf.
          lc.gather_bytes(own_block(recvbuf, recvcount, recvtype, root, comm), recv.bytes(), root);
        } else {
          SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
          lc.gather_bytes(send.bytes(), recv.bytes(), root);
        }
        recv.finish();
      },
      [&] {
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
      });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return intercept(
      Coll::alltoall, comm, "MPI_Alltoall",
      [&](Arguments& a) {
        check_exchange(a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, a.size());
      },
      [&](lanes::Communicator& lc) {
        RecvBytes recv({recvbuf, recvcount, recvtype, lc.size()}, comm);
        if (sendbuf == MPI_IN_PLACE) {
          // The data to send is in recvbuf, laid out by recvcount and recvtype.
          lc.alltoall_bytes(
              copy_of(SendBytes({recvbuf, recvcount, recvtype, lc.size()}, comm).bytes()),
              recv.bytes());
        } else {
          SendBytes send({sendbuf, sendcount, sendtype, lc.size()}, comm);
          lc.alltoall_bytes(send.bytes(), recv.bytes());
        }
        recv.finish();
      },
      [&] {
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return intercept(
      Coll::allgather, comm, "MPI_Allgather",
      [&](Arguments& a) {
        check_exchange(a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 1);
      },
      [&](lanes::Communicator& lc) {
        RecvBytes recv({recvbuf, recvcount, recvtype, lc.size()}, comm);
        if (sendbuf == MPI_IN_PLACE) {
          // This rank's contribution already sits in its own block of recvbuf.
          lc.allgather_bytes(own_block(recvbuf, recvcount, recvtype, lc.rank(), comm),
                             recv.bytes());
        } else {
          SendBytes send({sendbuf, sendcount, sendtype, 1}, comm);
          lc.allgather_bytes(send.bytes(), recv.bytes());
        }
        recv.finish();
      },
      [&] {
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
      });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  const auto red = reduction_of(count, datatype, op);
  return intercept(
      Coll::reduce, comm, "MPI_Reduce",
      [&](Arguments& a) {
        a.root(root);
        // MPI_IN_PLACE at the root: the input is in recvbuf.
        if (a.rank() != root || sendbuf != MPI_IN_PLACE) {
          a.data("sendbuf", sendbuf, "count", count, "datatype", datatype);
        }
        if (a.rank() == root) a.data("recvbuf", recvbuf, "count", count, "datatype", datatype);
        a.op(op);
      },
      [&](lanes::Communicator& lc) {
        auto* out = static_cast<std::byte*>(recvbuf);
        const std::span<std::byte> result(out, lc.rank() == root ? red->bytes : 0);
        // MPI_IN_PLACE at the root: its input is in recvbuf (lanes reduces in place).
        const std::span<const std::byte> in =
            sendbuf == MPI_IN_PLACE ? std::span<const std::byte>(result)
                                    : std::span(static_cast<const std::byte*>(sendbuf), red->bytes);
        lc.reduce_bytes(in, result, red->type, red->op, root);
      },
      [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); },
      red.has_value());
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  const auto red = reduction_of(count, datatype, op);
  return intercept(
      Coll::allreduce, comm, "MPI_Allreduce",
      [&](Arguments& a) {
        if (sendbuf != MPI_IN_PLACE)
          a.data("sendbuf", sendbuf, "count", count, "datatype", datatype);
        a.data("recvbuf", recvbuf, "count", count, "datatype", datatype);
        a.op(op);
      },
      [&](lanes::Communicator& lc) {
        const std::span<std::byte> result(static_cast<std::byte*>(recvbuf), red->bytes);
        const std::span<const std::byte> in =
            sendbuf == MPI_IN_PLACE ? std::span<const std::byte>(result)
                                    : std::span(static_cast<const std::byte*>(sendbuf), red->bytes);
        lc.allreduce_bytes(in, result, red->type, red->op);
      },
      [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); }, red.has_value());
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  const auto red = reduction_of(recvcount, datatype, op);
  return intercept(
      Coll::reduce_scatter_block, comm, "MPI_Reduce_scatter_block",
      [&](Arguments& a) {
        // MPI_IN_PLACE: the input is recvbuf itself, size() blocks.
        if (sendbuf != MPI_IN_PLACE) {
          a.data("sendbuf", sendbuf, "recvcount", recvcount, "datatype", datatype, a.size());
        }
        a.data("recvbuf", recvbuf, "recvcount", recvcount, "datatype", datatype,
               sendbuf == MPI_IN_PLACE ? a.size() : 1);
        a.op(op);
      },
      [&](lanes::Communicator& lc) {
        // The input: size() blocks of recvcount elements; the result: this rank's block.
        const std::size_t all = red->bytes * static_cast<std::size_t>(lc.size());
        auto* out = static_cast<std::byte*>(recvbuf);
        if (sendbuf == MPI_IN_PLACE) {
          // The input is recvbuf itself, the result goes to its first block: reduce into
          // scratch, since lanes reads the input while it writes the result.
          std::vector<std::byte> result(red->bytes);
          lc.reduce_scatter_block_bytes(std::span<const std::byte>(out, all), result, red->type,
                                        red->op);
          std::copy(result.begin(), result.end(), out);
        } else {
          lc.reduce_scatter_block_bytes(std::span(static_cast<const std::byte*>(sendbuf), all),
                                        std::span(out, red->bytes), red->type, red->op);
        }
      },
      [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); },
      red.has_value());
}

int MPI_Barrier(MPI_Comm comm) {
  return intercept(
      Coll::barrier, comm, "MPI_Barrier", [](Arguments&) {},  // only the communicator
      [&](lanes::Communicator& lc) { lc.barrier(); }, [&] { return PMPI_Barrier(comm); });
}

}  // extern "C"
