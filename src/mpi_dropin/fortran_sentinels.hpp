// What the Fortran entry points (fortran.cpp, fortran_requests.cpp) share:
// Open MPI's Fortran sentinels, MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE
// and MPI_STATUSES_IGNORE, which are addresses of its common blocks under
// each name mangling (recognised by address, as Open MPI's own bindings
// do), and the optional ierror argument.
#pragma once

#include <mpi.h>

extern "C" {
// Weak: a mangling this Open MPI does not define is simply null.
extern int mpi_fortran_in_place __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_in_place__ __attribute__((weak));
extern int MPI_FORTRAN_IN_PLACE __attribute__((weak));
extern int mpi_fortran_bottom __attribute__((weak));
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_bottom__ __attribute__((weak));
extern int MPI_FORTRAN_BOTTOM __attribute__((weak));
extern int mpi_fortran_status_ignore __attribute__((weak));
extern int mpi_fortran_status_ignore_ __attribute__((weak));
extern int mpi_fortran_status_ignore__ __attribute__((weak));
extern int MPI_FORTRAN_STATUS_IGNORE __attribute__((weak));
extern int mpi_fortran_statuses_ignore __attribute__((weak));
extern int mpi_fortran_statuses_ignore_ __attribute__((weak));
extern int mpi_fortran_statuses_ignore__ __attribute__((weak));
extern int MPI_FORTRAN_STATUSES_IGNORE __attribute__((weak));
}

namespace hreduce::detail::mpi_dropin::fortran {

inline bool is_one_of(const void* p, const void* a, const void* b, const void* c, const void* d) {
  return p != nullptr && (p == a || p == b || p == c || p == d);
}

inline bool is_in_place(const void* p) {
  return is_one_of(p, &mpi_fortran_in_place, &mpi_fortran_in_place_, &mpi_fortran_in_place__,
                   &MPI_FORTRAN_IN_PLACE);
}
inline bool is_bottom(const void* p) {
  return is_one_of(p, &mpi_fortran_bottom, &mpi_fortran_bottom_, &mpi_fortran_bottom__,
                   &MPI_FORTRAN_BOTTOM);
}
inline bool ignores_status(const void* p) {
  return is_one_of(p, &mpi_fortran_status_ignore, &mpi_fortran_status_ignore_,
                   &mpi_fortran_status_ignore__, &MPI_FORTRAN_STATUS_IGNORE);
}
inline bool ignores_statuses(const void* p) {
  return is_one_of(p, &mpi_fortran_statuses_ignore, &mpi_fortran_statuses_ignore_,
                   &mpi_fortran_statuses_ignore__, &MPI_FORTRAN_STATUSES_IGNORE);
}

// ierror is optional from `use mpi_f08`.
inline void set(MPI_Fint* ierror, int rc) {
  if (ierror != nullptr) *ierror = static_cast<MPI_Fint>(rc);
}

}  // namespace hreduce::detail::mpi_dropin::fortran
