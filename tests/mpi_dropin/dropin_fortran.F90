! A Fortran program that knows only MPI: every reduction the drop-in
! library serves, through mpif.h (-DMPIFH), `use mpi` (default) or
! `use mpi_f08` (-DF08), checked against results computed here in rank
! order. Integers only, so every result is exact.
#if defined(F08)
#define HANDLE(kind) type(kind)
#else
#define HANDLE(kind) integer
#endif

module affine_ops
#if defined(F08)
  use mpi_f08
#elif !defined(MPIFH)
  use mpi
#endif
  implicit none
#if defined(MPIFH)
  include 'mpif.h'
#endif
contains
  ! x -> a x + b, pairs of integers, composed in rank order: inout = in o inout.
#if defined(F08)
  subroutine affine(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only : c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: x(:), y(:)
    integer :: k, a, b
    call c_f_pointer(invec, x, [2 * len])
    call c_f_pointer(inoutvec, y, [2 * len])
#else
  subroutine affine(x, y, len, datatype)
    integer :: len, datatype
    integer :: x(2 * len), y(2 * len)
    integer :: k, a, b
#endif
    do k = 0, len - 1
      a = x(2 * k + 1) * y(2 * k + 1)
      b = y(2 * k + 1) * x(2 * k + 2) + y(2 * k + 2)
      y(2 * k + 1) = a
      y(2 * k + 2) = b
    end do
  end subroutine affine
end module affine_ops

program dropin_fortran
  use affine_ops
#if defined(F08)
  use mpi_f08_ext  ! MPIX_Allreduce_init, Open MPI's persistent collectives
#endif
  implicit none
  integer, parameter :: n = 40
  integer :: rank, size, ierr, i, r, failures, all_failures
  integer :: x(n), y(n), expect(n), z(n * 8)
  double precision :: d(n), e(n)
  integer, allocatable :: counts(:)
  integer :: pairs(2 * n), got(2 * n), a, b, k
  HANDLE(MPI_Datatype) :: pair_type
  HANDLE(MPI_Op) :: affine_op
  HANDLE(MPI_Comm) :: comm, only_nonblocking
  HANDLE(MPI_Request) :: request, requests(3)
  integer :: ring_out(n), ring_in(n), index
  logical :: flag
#if defined(MPIFH)
  ! mpif.h declares no interfaces, so gfortran checks the calls to one
  ! procedure against each other and flags a choice buffer passed as an
  ! integer array here, a double array there, MPI_IN_PLACE (a scalar)
  ! elsewhere. This is the interface Open MPI's `use mpi` gives the same
  ! symbol (its ignore-TKR module): any type, kind and rank.
  interface
    subroutine MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierror)
      !GCC$ ATTRIBUTES NO_ARG_CHECK :: sendbuf, recvbuf
      real, dimension(*) :: sendbuf, recvbuf
      integer :: count, datatype, op, comm, ierror
    end subroutine MPI_Allreduce
  end interface
#endif

  call MPI_Init(ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_size(comm, size, ierr)
  failures = 0

  do r = 1, 3  ! the library builds the communicator's team after a few calls
    do i = 1, n
      x(i) = rank * 3 + i
      d(i) = dble(mod(rank * 7 + i, 11))
    end do
    ! allreduce, and in place
    call MPI_Allreduce(x, y, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, n
      expect(i) = 3 * size * (size - 1) / 2 + size * i
    end do
    if (any(y /= expect) .or. ierr /= MPI_SUCCESS) call bad('allreduce')
    y = x
    call MPI_Allreduce(MPI_IN_PLACE, y, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    if (any(y /= expect)) call bad('allreduce in place')
#if defined(F08)
    call MPI_Allreduce(d, e, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm)  ! ierror is optional here
#else
    call MPI_Allreduce(d, e, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
#endif
    do i = 1, n
      if (e(i) /= maxval([(dble(mod(k * 7 + i, 11)), k = 0, size - 1)])) call bad('allreduce max')
    end do
    ! reduce onto the last rank
    y = -1
    call MPI_Reduce(x, y, n, MPI_INTEGER, MPI_SUM, size - 1, comm, ierr)
    if (rank == size - 1 .and. any(y /= expect)) call bad('reduce')
    if (rank /= size - 1 .and. any(y /= -1)) call bad('reduce wrote a non-root')
    ! scan and exscan; exscan leaves rank 0 alone
    call MPI_Scan(x, y, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, n
      expect(i) = 3 * rank * (rank + 1) / 2 + (rank + 1) * i
    end do
    if (any(y /= expect)) call bad('scan')
    y = -7
    call MPI_Exscan(x, y, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, n
      expect(i) = 3 * rank * (rank - 1) / 2 + rank * i
    end do
    if (rank > 0 .and. any(y /= expect)) call bad('exscan')
    if (rank == 0 .and. any(y /= -7)) call bad('exscan wrote rank 0')
    ! reduce_scatter_block: 2 elements each; reduce_scatter: rank + 1 each
    do i = 1, 2 * size
      z(i) = rank + i
    end do
    call MPI_Reduce_scatter_block(z, y, 2, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, 2
      if (y(i) /= size * (size - 1) / 2 + size * (2 * rank + i)) call bad('reduce_scatter_block')
    end do
    allocate(counts(size))
    counts = [(k + 1, k = 0, size - 1)]
    call MPI_Reduce_scatter(z, y, counts, MPI_INTEGER, MPI_SUM, comm, ierr)
    do i = 1, rank + 1
      k = rank * (rank + 1) / 2 + i  ! index into the whole vector
      if (y(i) /= size * (size - 1) / 2 + size * k) call bad('reduce_scatter')
    end do
    deallocate(counts)
  end do

  ! A nonblocking allreduce, served; HREDUCE_MPI_VERBOSE counts it under
  ! its C name (dropin_test.sh checks the line).
  do i = 1, n
    x(i) = rank * 3 + i
    expect(i) = 3 * size * (size - 1) / 2 + size * i
  end do
  y = -1
  call MPI_Iallreduce(x, y, n, MPI_INTEGER, MPI_SUM, comm, request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  if (any(y /= expect) .or. ierr /= MPI_SUCCESS) call bad('iallreduce')

  ! A communicator whose reductions are all nonblocking: MPI serves them
  ! (two, the warm-up) until its first barrier builds its team, the library
  ! after it (dropin_test.sh checks the counts).
  call MPI_Comm_dup(comm, only_nonblocking, ierr)
  do r = 1, 3
    if (r == 3) call MPI_Barrier(only_nonblocking, ierr)
    y = -1
    call MPI_Iallreduce(x, y, n, MPI_INTEGER, MPI_SUM, only_nonblocking, request, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    if (any(y /= expect) .or. ierr /= MPI_SUCCESS) call bad('iallreduce before and after a barrier')
  end do
  call MPI_Comm_free(only_nonblocking, ierr)

  ! Requests of a reduction and of point-to-point messages in one Waitall,
  ! then a scan completed by a Test loop and a Waitany.
  ring_out = rank * 100 + [(i, i = 1, n)]
  ring_in = -1
  y = -1
  call MPI_Ireduce(x, y, n, MPI_INTEGER, MPI_SUM, 0, comm, requests(1), ierr)
  call MPI_Irecv(ring_in, n, MPI_INTEGER, mod(rank + size - 1, size), 5, comm, requests(2), ierr)
  call MPI_Isend(ring_out, n, MPI_INTEGER, mod(rank + 1, size), 5, comm, requests(3), ierr)
  call MPI_Waitall(3, requests, MPI_STATUSES_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS) call bad('waitall')
  if (rank == 0 .and. any(y /= expect)) call bad('ireduce in a waitall')
  if (any(ring_in /= mod(rank + size - 1, size) * 100 + [(i, i = 1, n)])) call bad('ring')
  call MPI_Iscan(x, y, n, MPI_INTEGER, MPI_SUM, comm, request, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(request, flag, MPI_STATUS_IGNORE, ierr)
  end do
  do i = 1, n
    if (y(i) /= 3 * rank * (rank + 1) / 2 + (rank + 1) * i) call bad('iscan by test')
  end do
  call MPI_Iexscan(x, y, n, MPI_INTEGER, MPI_SUM, comm, requests(1), ierr)
  call MPI_Waitany(1, requests, index, MPI_STATUS_IGNORE, ierr)
  if (index /= 1) call bad('waitany index')
  do i = 1, n
    if (rank > 0 .and. y(i) /= 3 * rank * (rank - 1) / 2 + rank * i) call bad('iexscan')
  end do
#if defined(F08)
  ! Persistent: prepared once, started three times.
  call MPIX_Allreduce_init(x, y, n, MPI_INTEGER, MPI_SUM, comm, MPI_INFO_NULL, request, ierr)
  do r = 1, 3
    do i = 1, n
      x(i) = rank * 3 + i + r
    end do
    y = -1
    call MPI_Start(request, ierr)
    call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
    if (any(y /= expect + size * r)) call bad('persistent allreduce')
  end do
  call MPI_Request_free(request, ierr)
#endif

  ! A user op that does not commute, on a contiguous pair type.
  call MPI_Type_contiguous(2, MPI_INTEGER, pair_type, ierr)
  call MPI_Type_commit(pair_type, ierr)
  call MPI_Op_create(affine, .false., affine_op, ierr)
  do i = 1, n
    pairs(2 * i - 1) = 1 + mod(rank + i, 2)
    pairs(2 * i) = rank + i
  end do
  do r = 1, 3
    call MPI_Allreduce(pairs, got, n, pair_type, affine_op, comm, ierr)
    do i = 1, n
      a = 1 + mod(i, 2)
      b = i
      do k = 1, size - 1  ! (a, b) o (a_k, b_k) in rank order
        b = a * 0 + (1 + mod(k + i, 2)) * b + (k + i)
        a = a * (1 + mod(k + i, 2))
      end do
      if (got(2 * i - 1) /= a .or. got(2 * i) /= b) call bad('user op in rank order')
    end do
  end do
  call MPI_Op_free(affine_op, ierr)
  call MPI_Type_free(pair_type, ierr)

  call MPI_Comm_free(comm, ierr)
  call MPI_Allreduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a)', 'dropin_fortran: ', all_failures, ' failures'
  call MPI_Finalize(ierr)
  if (all_failures /= 0) error stop 1

contains
  subroutine bad(what)
    character(*) :: what
    failures = failures + 1
    if (failures <= 10) print '(a, i0, 2a)', 'rank ', rank, ': wrong ', what
  end subroutine bad
end program dropin_fortran
