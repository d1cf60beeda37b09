// What liblanes_mpi needs to know of an MPI datatype (size, extents, whether it is contiguous,
// predefined or committed), asked of the MPI library once per predefined datatype: those never
// change or go away, so their answers are kept; a derived datatype is asked on every call (its
// handle may be freed and reused).
#pragma once

#include <mpi.h>

namespace lanes::mpi_interpose {

struct TypeShape {
  bool known = false;  // the MPI library answered every query
  bool named = false;  // a predefined datatype
  MPI_Count size = 0;  // bytes of data in one element
  MPI_Count lb = 0;    // lower bound and extent: the stride between elements
  MPI_Count extent = 0;
  MPI_Count true_lb = 0;  // offset of the first byte of data
  MPI_Count true_extent = 0;
  // Elements without holes, laid end to end: a buffer of them is one run of bytes.
  bool contiguous() const { return true_extent == size && extent == size; }
};

TypeShape type_shape(MPI_Datatype type);
// The same for a datatype that must be usable: throws lanes::Error when the MPI library does not
// answer.
TypeShape usable_shape(MPI_Datatype type);

}  // namespace lanes::mpi_interpose
