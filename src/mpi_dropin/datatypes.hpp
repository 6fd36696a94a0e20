// What the MPI drop-in library knows about MPI datatypes and ops: which
// (datatype, op) pairs it serves, and how it combines them.
//
// Predefined ops on the common C and Fortran number types and on the C pair
// types run hreduce's own compiled ops. Every other pair MPI's op table
// allows (long double, complex, bool and Fortran LOGICAL, MPI_AINT, the
// Fortran pair types, ...) and every user op from MPI_Op_create combine
// through PMPI_Reduce_local, which is right for any datatype and for C,
// C++ and Fortran user functions alike. Anything else (derived datatypes
// other than contiguous and dup, pairs outside the op table) is handed to
// PMPI unchanged, so MPI itself reports or serves it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <string>

#include "hreduce/team.hpp"

namespace hreduce::detail::mpi_dropin {

// A datatype as the library sees it: `multiplicity` elements of the
// predefined `base` (a contiguous or dup'ed type) or the type itself.
struct Datatype {
  MPI_Datatype base = MPI_DATATYPE_NULL;
  int code = -1;  // the base's row in the table of predefined types; -1: unknown
  std::size_t multiplicity = 1;
  std::size_t extent = 0;  // bytes from one element of the datatype to the next
  std::string why_not;     // non-empty: not served, and why (for HREDUCE_MPI_VERBOSE)
  // How messages name it: "MPI_DOUBLE", the name the program gave it
  // (MPI_Type_set_name), or how it was built ("MPI_Type_contiguous(3, MPI_DOUBLE)").
  std::string name;
};
Datatype describe(MPI_Datatype type);

// How one call combines its elements: an erased op for the engine, on
// elements of `elem_size` bytes, `per_element` of them per MPI element.
// Lives as long as the call (the erased op points into it).
class Combiner {
 public:
  // Not served (why_not() says why) when the op does not apply to the type.
  Combiner(MPI_Op op, const Datatype& type, MPI_Datatype original);
  Combiner(const Combiner&) = delete;
  Combiner& operator=(const Combiner&) = delete;

  const std::string& why_not() const { return why_not_; }
  const ErasedOp& erased() const { return erased_; }
  std::size_t per_element() const { return per_element_; }
  // A predefined op on a predefined type: its meaning never changes, so it
  // may serve later calls on the same pair (the rule combiner_for keeps by).
  bool lasts() const { return lasts_; }

 private:
  static void reduce_local(const void* a, const void* b, void* out, std::size_t n,
                           const void* self);

  ErasedOp erased_;
  std::size_t per_element_ = 1;
  bool lasts_ = false;
  MPI_Op op_;
  MPI_Datatype type_;  // what PMPI_Reduce_local combines
  std::string why_not_;
  std::string type_name_;  // erased_.type_name points into it
};

// The combiner of a call on `type` with `op`. A predefined type with a
// predefined op never changes meaning, so each thread keeps the last few it
// built (describing them was a tenth of a small call, perf); any other
// pair is built afresh in `fresh`, which must outlive the call.
const Combiner& combiner_for(MPI_Op op, MPI_Datatype type, std::optional<Combiner>& fresh);

}  // namespace hreduce::detail::mpi_dropin
