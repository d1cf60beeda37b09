#include "mpi/datatypes.hpp"

#include <array>
#include <cstddef>
#include <lanes/error.hpp>

namespace lanes::mpi_interpose {

namespace {

TypeShape ask(MPI_Datatype type) {
  TypeShape s;
  int integers = 0, addresses = 0, datatypes = 0, combiner = MPI_UNDEFINED;
  s.named =
      PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner) == MPI_SUCCESS &&
      combiner == MPI_COMBINER_NAMED;
  s.known = PMPI_Type_size_x(type, &s.size) == MPI_SUCCESS && s.size != MPI_UNDEFINED &&
            s.size >= 0 && PMPI_Type_get_extent_x(type, &s.lb, &s.extent) == MPI_SUCCESS &&
            PMPI_Type_get_true_extent_x(type, &s.true_lb, &s.true_extent) == MPI_SUCCESS;
  return s;
}

// The predefined datatypes seen so far: a program uses a handful. Collectives reach lanes from
// one thread at a time (MPI_THREAD_MULTIPLE turns lanes off), so plain slots suffice.
struct Known {
  MPI_Datatype type;
  TypeShape shape;
};
constexpr std::size_t kSlots = 16;
std::array<Known, kSlots> known_types{};
std::size_t known_count = 0;

}  // namespace

TypeShape type_shape(MPI_Datatype type) {
  for (std::size_t i = 0; i < known_count; ++i) {
    if (known_types[i].type == type) return known_types[i].shape;
  }
  const TypeShape s = ask(type);
  if (s.named && s.known && known_count < kSlots) known_types[known_count++] = Known{type, s};
  return s;
}

TypeShape usable_shape(MPI_Datatype type) {
  const TypeShape s = type_shape(type);
  if (!s.known) {
    throw lanes::Error(lanes::Errc::invalid_argument,
                       "MPI_Type_size_x or MPI_Type_get_extent_x failed");
  }
  return s;
}

}  // namespace lanes::mpi_interpose
