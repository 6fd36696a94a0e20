/* A program written against MPI alone (no hreduce header): every call the
 * drop-in library intercepts, over predefined ops and types, pair types, a
 * contiguous derived type and user ops commutative and not, in place and
 * not, every root, zero and uneven counts, on MPI_COMM_WORLD, a duplicate
 * and a split communicator. The oracle is MPI's own collective, called as
 * PMPI_*, which the library never intercepts: with the data used here every
 * result is exact, so results must match bit for bit (pair types field by
 * field: their padding means nothing). Doubles of every magnitude: the same
 * bits on every rank, within 1e-12 (relative to the sum of magnitudes) of
 * MPI's. Then bad arguments: the MPI error class, no hang.
 *
 * Run under mpirun with the library preloaded or linked in, and with
 * HREDUCE_MPI=off; exits non-zero on any difference. */
#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int checks = 0, failures = 0, world_rank = 0;

static void fail(const char* what, const char* type, const char* op, int count, const char* comm) {
  ++failures;
  if (failures <= 20) {
    fprintf(stderr, "rank %d: %s differs from MPI's (%s, %s, count %d, %s)\n", world_rank, what,
            type, op, count, comm);
  }
}

/* ---- element types: how to fill one element and compare two ---- */
enum { INT = 1, FLT = 2, CPX = 4, LOG = 8, BYT = 16, PAIR = 32, FINT = 64 /* Fortran integers */ };

typedef struct {
  float v;
  int i;
} float_int;
typedef struct {
  double v;
  int i;
} double_int;
typedef struct {
  long v;
  int i;
} long_int;
typedef struct {
  int v;
  int i;
} int_int;
typedef struct {
  short v;
  int i;
} short_int;
typedef struct {
  long double v;
  int i;
} long_double_int;

/* Values small enough that sums and products of up to 8 of them are exact
 * in every type, so any order of combination gives the same bits. */
static int small(int rank, size_t i, int salt) { return (int)((rank * 7 + i * 3 + salt) % 3) - 1; }
static int tiny(int rank, size_t i, int salt) { return (int)((rank * 5 + i + salt) % 2); }

#define FILL_INT(T, lo, SIGNED)                                \
  static void fill_##lo(void* b, size_t i, int r, int s) {     \
    ((T*)b)[i] = (T)(SIGNED ? small(r, i, s) : tiny(r, i, s)); \
  }                                                            \
  static int eq_##lo(const void* a, const void* b) { return *(const T*)a == *(const T*)b; }
FILL_INT(signed char, schar, 1)
FILL_INT(unsigned char, uchar, 0)
FILL_INT(short, shrt, 1)
FILL_INT(unsigned short, ushrt, 0)
FILL_INT(int, int_, 1)
FILL_INT(unsigned, uint, 0)
FILL_INT(long, long_, 1)
FILL_INT(unsigned long, ulong, 0)
FILL_INT(long long, llong, 1)
FILL_INT(unsigned long long, ullong, 0)
FILL_INT(int64_t, i64, 1)
FILL_INT(uint16_t, u16, 0)

#define FILL_FLT(T, lo)                                    \
  static void fill_##lo(void* b, size_t i, int r, int s) { \
    ((T*)b)[i] = (T)small(r, i, s) * (T)0.5;               \
  }                                                        \
  static int eq_##lo(const void* a, const void* b) { return *(const T*)a == *(const T*)b; }
FILL_FLT(float, flt)
FILL_FLT(double, dbl)
FILL_FLT(long double, ldbl)

static void fill_dbl3(void* b, size_t i, int r, int s) {
  for (size_t k = 0; k < 3; ++k) ((double*)b)[3 * i + k] = small(r, 3 * i + k, s) * 0.5;
}
static int eq_dbl3(const void* a, const void* b) { return memcmp(a, b, 3 * sizeof(double)) == 0; }
static void fill_cdbl(void* b, size_t i, int r, int s) {
  ((double _Complex*)b)[i] = small(r, i, s) + small(r, i, s + 1) * I;
}
static int eq_cdbl(const void* a, const void* b) {
  return *(const double _Complex*)a == *(const double _Complex*)b;
}
static void fill_cflt(void* b, size_t i, int r, int s) {
  ((float _Complex*)b)[i] = small(r, i, s) + small(r, i, s + 2) * I;
}
static int eq_cflt(const void* a, const void* b) {
  return *(const float _Complex*)a == *(const float _Complex*)b;
}
static void fill_bool(void* b, size_t i, int r, int s) { ((bool*)b)[i] = tiny(r, i, s); }
static int eq_bool(const void* a, const void* b) { return *(const bool*)a == *(const bool*)b; }
static void fill_byte(void* b, size_t i, int r, int s) {
  ((unsigned char*)b)[i] = (unsigned char)(r * 37 + i * 11 + s * 5);
}

/* Pairs: few distinct values, so MINLOC/MAXLOC ties (lowest index wins). */
#define FILL_PAIR(T, lo)                                                                 \
  static void fill_##lo(void* b, size_t i, int r, int s) {                               \
    ((T*)b)[i].v = small(r, i, s);                                                       \
    ((T*)b)[i].i = r * 10 + (int)(i % 4);                                                \
  }                                                                                      \
  static int eq_##lo(const void* a, const void* b) {                                     \
    return ((const T*)a)->v == ((const T*)b)->v && ((const T*)a)->i == ((const T*)b)->i; \
  }
FILL_PAIR(float_int, float_int)
FILL_PAIR(double_int, double_int)
FILL_PAIR(long_int, long_int)
FILL_PAIR(int_int, int_int)
FILL_PAIR(short_int, short_int)
FILL_PAIR(long_double_int, long_double_int)

/* Fortran's pair types hold two values of one type (gfortran's REAL,
 * DOUBLE PRECISION and INTEGER are float, double and int); LOGICAL is an
 * int that is 0 or 1. */
typedef struct {
  float v, i;
} real_pair;
typedef struct {
  double v, i;
} double_pair;
FILL_PAIR(real_pair, real_pair)
FILL_PAIR(double_pair, double_pair)
static void fill_logical(void* b, size_t i, int r, int s) { ((int*)b)[i] = tiny(r, i, s); }

typedef struct {
  MPI_Datatype type;
  const char* name;
  size_t size; /* extent */
  int category;
  void (*fill)(void*, size_t, int, int);
  int (*equal)(const void*, const void*);
} TypeCase;

typedef struct {
  MPI_Op op;
  const char* name;
  int categories;
} OpCase;

/* ---- user ops ---- */
/* Affine maps x -> a x + b on unsigned ints, composed in rank order:
 * inout = in ∘ inout, not commutative. */
static void affine(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  unsigned* x = in;
  unsigned* y = inout;
  for (int k = 0; k < *len; ++k) {
    const unsigned a = x[2 * k] * y[2 * k], b = y[2 * k] * x[2 * k + 1] + y[2 * k + 1];
    y[2 * k] = a;
    y[2 * k + 1] = b;
  }
}
/* The complex product of the seed example, on MPI_Type_contiguous(2, MPI_DOUBLE). */
static void complex_product(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  double* x = in;
  double* y = inout;
  for (int k = 0; k < *len; ++k) {
    const double re = x[2 * k] * y[2 * k] - x[2 * k + 1] * y[2 * k + 1];
    const double im = x[2 * k] * y[2 * k + 1] + x[2 * k + 1] * y[2 * k];
    y[2 * k] = re;
    y[2 * k + 1] = im;
  }
}
static void fill_affine(void* b, size_t i, int r, int s) {
  ((unsigned*)b)[2 * i] = (unsigned)(2 * r + 3 + (int)(i % 5) + s);
  ((unsigned*)b)[2 * i + 1] = (unsigned)(r * 7919 + (int)i + s);
}
static int eq_pair_u(const void* a, const void* b) {
  return memcmp(a, b, 2 * sizeof(unsigned)) == 0;
}
static void fill_cpair(void* b, size_t i, int r, int s) {
  ((double*)b)[2 * i] = small(r, i, s);
  ((double*)b)[2 * i + 1] = small(r, i, s + 1);
}
static int eq_cpair(const void* a, const void* b) {
  return ((const double*)a)[0] == ((const double*)b)[0] &&
         ((const double*)a)[1] == ((const double*)b)[1];
}

/* ---- one collective: ours (MPI_*) against MPI's own (PMPI_*) ---- */
enum Coll { ALLREDUCE, REDUCE, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, SCAN, EXSCAN, NCOLL };
static const char* coll_name[] = {"allreduce", "reduce", "reduce_scatter", "reduce_scatter_block",
                                  "scan",      "exscan"};

/* Open MPI refuses predefined ops on derived datatypes, which the library
 * serves element by element: their oracle is the same call on the
 * predefined type inside. */
static MPI_Datatype three_doubles = MPI_DATATYPE_NULL, dup_int = MPI_DATATYPE_NULL;

static void run_one(int coll, const TypeCase* t, MPI_Op op, const char* op_name, int count,
                    int in_place, int root, MPI_Comm comm, const char* comm_name, int salt) {
  const int m = t->type == three_doubles ? 3 : 1;
  const MPI_Datatype ot = t->type == three_doubles ? MPI_DOUBLE
                          : t->type == dup_int     ? MPI_INT
                                                   : t->type;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* reduce_scatter: uneven counts, some zero; block: count each. */
  int* counts = malloc(sizeof(int) * (size_t)size);
  int* oracle_counts = malloc(sizeof(int) * (size_t)size);
  size_t total = (size_t)count;
  if (coll == REDUCE_SCATTER) {
    total = 0;
    for (int r = 0; r < size; ++r) {
      counts[r] = (r % 3 == 1) ? 0 : count + r;
      oracle_counts[r] = counts[r] * m;
      total += (size_t)counts[r];
    }
  } else if (coll == REDUCE_SCATTER_BLOCK) {
    total = (size_t)count * (size_t)size;
  }
  const size_t mine = coll == REDUCE_SCATTER ? (size_t)counts[rank] : (size_t)count;
  const size_t in_n = total,
               out_n = coll == REDUCE_SCATTER || coll == REDUCE_SCATTER_BLOCK ? mine : total;
  const size_t buf_n = (in_n > out_n ? in_n : out_n) + 1;
  unsigned char* in = calloc(buf_n, t->size);
  unsigned char* ours = calloc(buf_n, t->size);
  unsigned char* theirs = calloc(buf_n, t->size);
  for (size_t i = 0; i < in_n; ++i) t->fill(in, i, rank, salt);
  /* A sentinel pattern where nothing must be written. */
  memset(ours, 0x5a, buf_n * t->size);
  memset(theirs, 0x5a, buf_n * t->size);
  const int inplace_ok = in_place && (coll != REDUCE || rank == root);
  if (inplace_ok) {
    memcpy(ours, in, in_n * t->size);
    memcpy(theirs, in, in_n * t->size);
  }
  const void* send_ours = inplace_ok ? MPI_IN_PLACE : in;
  const void* send_theirs = inplace_ok ? MPI_IN_PLACE : in;
  int rc = MPI_SUCCESS, rc2 = MPI_SUCCESS;
  switch (coll) {
    case ALLREDUCE:
      rc = MPI_Allreduce(send_ours, ours, count, t->type, op, comm);
      rc2 = PMPI_Allreduce(send_theirs, theirs, count * m, ot, op, comm);
      break;
    case REDUCE:
      rc = MPI_Reduce(send_ours, ours, count, t->type, op, root, comm);
      rc2 = PMPI_Reduce(send_theirs, theirs, count * m, ot, op, root, comm);
      break;
    case REDUCE_SCATTER:
      rc = MPI_Reduce_scatter(send_ours, ours, counts, t->type, op, comm);
      rc2 = PMPI_Reduce_scatter(send_theirs, theirs, oracle_counts, ot, op, comm);
      break;
    case REDUCE_SCATTER_BLOCK:
      rc = MPI_Reduce_scatter_block(send_ours, ours, count, t->type, op, comm);
      rc2 = PMPI_Reduce_scatter_block(send_theirs, theirs, count * m, ot, op, comm);
      break;
    case SCAN:
      rc = MPI_Scan(send_ours, ours, count, t->type, op, comm);
      rc2 = PMPI_Scan(send_theirs, theirs, count * m, ot, op, comm);
      break;
    default:
      rc = MPI_Exscan(send_ours, ours, count, t->type, op, comm);
      rc2 = PMPI_Exscan(send_theirs, theirs, count * m, ot, op, comm);
      break;
  }
  ++checks;
  if (rc != MPI_SUCCESS || rc2 != MPI_SUCCESS) {
    fail("return code", t->name, op_name, count, comm_name);
  } else {
    /* What this rank receives; exscan's rank 0 and a reduce's non-roots
     * receive nothing (exscan's rank 0 buffer must stay untouched). */
    size_t n = out_n;
    if ((coll == REDUCE && rank != root)) n = 0;
    if (coll == EXSCAN && rank == 0) {
      n = 0;
      const unsigned char* expect = inplace_ok ? in : NULL;
      for (size_t b = 0; b < out_n * t->size; ++b) {
        const unsigned char want = expect ? expect[b] : 0x5a;
        if (ours[b] != want) {
          fail("exscan's rank 0 buffer", t->name, op_name, count, comm_name);
          break;
        }
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (!t->equal(ours + i * t->size, theirs + i * t->size)) {
        char what[64];
        snprintf(what, sizeof what, "%s element %zu", coll_name[coll], i);
        fail(what, t->name, op_name, count, comm_name);
        break;
      }
    }
  }
  free(in);
  free(ours);
  free(theirs);
  free(counts);
  free(oracle_counts);
}

static void run_matrix(MPI_Comm comm, const char* comm_name, const TypeCase* types, int ntypes,
                       const OpCase* ops, int nops) {
  int size;
  MPI_Comm_size(comm, &size);
  static const int sizes[] = {0, 1, 5, 300};
  int salt = 0;
  for (int c = 0; c < NCOLL; ++c) {
    for (int t = 0; t < ntypes; ++t) {
      for (int o = 0; o < nops; ++o) {
        if (!(types[t].category & ops[o].categories)) continue;
        for (int s = 0; s < 4; ++s) {
          for (int in_place = 0; in_place < 2; ++in_place) {
            const int root = (c == REDUCE) ? (s + in_place) % size : 0;
            run_one(c, &types[t], ops[o].op, ops[o].name, sizes[s], in_place, root, comm, comm_name,
                    ++salt);
          }
        }
      }
    }
  }
}

/* Doubles of every magnitude, where the order of the sum matters: with the
 * library every rank gets the same bits, within 1e-12 of the sum of
 * magnitudes from MPI's result (whose order differs). */
static void random_doubles(MPI_Comm comm, int library_on) {
  enum { n = 5000 };
  static double x[n], ours[n], theirs[n], root_copy[n], magnitude[n];
  int rank;
  MPI_Comm_rank(comm, &rank);
  unsigned state = 12345u + 977u * (unsigned)rank;
  for (int i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    const double mantissa = (double)(state >> 8) / (double)(1u << 24) - 0.5;
    x[i] = mantissa * (double)(1u << (state % 24)) / (double)(1u << 12);
  }
  for (int rep = 0; rep < 4; ++rep) MPI_Allreduce(x, ours, n, MPI_DOUBLE, MPI_SUM, comm);
  PMPI_Allreduce(x, theirs, n, MPI_DOUBLE, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) root_copy[i] = x[i] < 0 ? -x[i] : x[i];
  PMPI_Allreduce(root_copy, magnitude, n, MPI_DOUBLE, MPI_SUM, comm);
  memcpy(root_copy, ours, sizeof ours);
  PMPI_Bcast(root_copy, n, MPI_DOUBLE, 0, comm);
  ++checks;
  if (library_on && memcmp(root_copy, ours, sizeof ours) != 0) {
    fail("allreduce bits across ranks", "MPI_DOUBLE", "MPI_SUM", n, "MPI_COMM_WORLD");
  }
  for (int i = 0; i < n; ++i) {
    const double d = ours[i] - theirs[i];
    if ((d < 0 ? -d : d) > 1e-12 * magnitude[i]) {
      fail("random double sum", "MPI_DOUBLE", "MPI_SUM", n, "MPI_COMM_WORLD");
      break;
    }
  }
}

/* Communicators freed and made again, split differently each time (MPI may
 * hand out a freed one's handle again): every call past the warm-up is
 * served by the new communicator's team, never by one a thread remembered
 * from before. The expected sums are plain loops over the members. */
static void remade_communicators(void) {
  int world_size;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  for (int round = 0; round < 4; ++round) {
    MPI_Comm c;
    const int colors = round % 2 + 1;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % colors, world_rank, &c);
    for (int k = 0; k < 12; ++k) {
      int x = world_rank + 100 * round + k, y = -1;
      MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c);
      int expected = 0;
      for (int r = 0; r < world_size; ++r) {
        if (r % colors == world_rank % colors) expected += r + 100 * round + k;
      }
      ++checks;
      if (y != expected) {
        fail("allreduce on a remade communicator", "MPI_INT", "MPI_SUM", 1, "remade split");
        break;
      }
    }
    MPI_Comm_free(&c);
  }
}

/* Bad arguments: the MPI error class on every rank, and no hang. */
static void bad_arguments(MPI_Comm comm, int library_on) {
  MPI_Comm c;
  MPI_Comm_dup(comm, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  int rank, size, cls;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  double x[4] = {1, 2, 3, 4}, y[4];
  for (int k = 0; k < 4; ++k) MPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_SUM, c); /* warm */
  int rc = MPI_Allreduce(x, y, -1, MPI_DOUBLE, MPI_SUM, c);
  MPI_Error_class(rc, &cls);
  ++checks;
  if (cls != MPI_ERR_COUNT)
    fail("negative count's error class", "MPI_DOUBLE", "MPI_SUM", -1, "dup");
  rc = MPI_Reduce(x, y, 4, MPI_DOUBLE, MPI_SUM, size + 3, c);
  MPI_Error_class(rc, &cls);
  ++checks;
  if (cls != MPI_ERR_ROOT) fail("bad root's error class", "MPI_DOUBLE", "MPI_SUM", 4, "dup");
  rc = MPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_OP_NULL, c);
  MPI_Error_class(rc, &cls);
  ++checks;
  if (cls != MPI_ERR_OP) fail("null op's error class", "MPI_DOUBLE", "MPI_OP_NULL", 4, "dup");
  if (library_on && size > 1) {
    /* Open MPI alone would hang or corrupt memory here. */
    rc = MPI_Allreduce(x, y, rank == size - 1 ? 3 : 4, MPI_DOUBLE, MPI_SUM, c);
    MPI_Error_class(rc, &cls);
    ++checks;
    if (cls != MPI_ERR_COUNT)
      fail("mismatched counts' error class", "MPI_DOUBLE", "MPI_SUM", 4, "dup");
    /* MPI_IN_PLACE on a reduce's non-root: MPI_ERR_ARG there, and the
     * root is told instead of left waiting. */
    rc = MPI_Reduce(rank == 0 ? (const void*)x : MPI_IN_PLACE, y, 4, MPI_DOUBLE, MPI_SUM, 0, c);
    MPI_Error_class(rc, &cls);
    ++checks;
    if (rank != 0 && cls != MPI_ERR_ARG)
      fail("in place at a non-root", "MPI_DOUBLE", "MPI_SUM", 4, "dup");
    if (rank == 0 && rc == MPI_SUCCESS)
      fail("the root of a failed reduce", "MPI_DOUBLE", "MPI_SUM", 4, "dup");
    /* The communicator still works afterwards. */
    rc = MPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_SUM, c);
    ++checks;
    if (rc != MPI_SUCCESS || y[3] != 4.0 * size)
      fail("allreduce after the errors", "MPI_DOUBLE", "MPI_SUM", 4, "dup");
  }
  MPI_Comm_free(&c);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  const char* env = getenv("HREDUCE_MPI");
  const int library_on = !(env && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0));

  const TypeCase types[] = {
      {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, INT, fill_schar, eq_schar},
      {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, INT, fill_uchar, eq_uchar},
      {MPI_SHORT, "MPI_SHORT", sizeof(short), INT, fill_shrt, eq_shrt},
      {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(unsigned short), INT, fill_ushrt, eq_ushrt},
      {MPI_INT, "MPI_INT", sizeof(int), INT, fill_int_, eq_int_},
      {MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned), INT, fill_uint, eq_uint},
      {MPI_LONG, "MPI_LONG", sizeof(long), INT, fill_long_, eq_long_},
      {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(unsigned long), INT, fill_ulong, eq_ulong},
      {MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long), INT, fill_llong, eq_llong},
      {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long), INT,
       fill_ullong, eq_ullong},
      {MPI_INT64_T, "MPI_INT64_T", 8, INT, fill_i64, eq_i64},
      {MPI_UINT16_T, "MPI_UINT16_T", 2, INT, fill_u16, eq_u16},
      {MPI_FLOAT, "MPI_FLOAT", sizeof(float), FLT, fill_flt, eq_flt},
      {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double), FLT, fill_dbl, eq_dbl},
      {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), FLT, fill_ldbl, eq_ldbl},
      {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", sizeof(float _Complex), CPX, fill_cflt, eq_cflt},
      {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", sizeof(double _Complex), CPX, fill_cdbl,
       eq_cdbl},
      {MPI_C_BOOL, "MPI_C_BOOL", sizeof(bool), LOG, fill_bool, eq_bool},
      {MPI_BYTE, "MPI_BYTE", 1, BYT, fill_byte, eq_uchar},
      {MPI_FLOAT_INT, "MPI_FLOAT_INT", sizeof(float_int), PAIR, fill_float_int, eq_float_int},
      {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", sizeof(double_int), PAIR, fill_double_int, eq_double_int},
      {MPI_LONG_INT, "MPI_LONG_INT", sizeof(long_int), PAIR, fill_long_int, eq_long_int},
      {MPI_2INT, "MPI_2INT", sizeof(int_int), PAIR, fill_int_int, eq_int_int},
      {MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(short_int), PAIR, fill_short_int, eq_short_int},
      {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long_double_int), PAIR,
       fill_long_double_int, eq_long_double_int},
      /* Fortran's types, from C. */
      {MPI_INTEGER, "MPI_INTEGER", sizeof(int), FINT, fill_int_, eq_int_},
      {MPI_INTEGER8, "MPI_INTEGER8", 8, FINT, fill_i64, eq_i64},
      {MPI_REAL, "MPI_REAL", sizeof(float), FLT, fill_flt, eq_flt},
      {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", sizeof(double), FLT, fill_dbl, eq_dbl},
      {MPI_COMPLEX, "MPI_COMPLEX", sizeof(float _Complex), CPX, fill_cflt, eq_cflt},
      {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", sizeof(double _Complex), CPX, fill_cdbl, eq_cdbl},
      {MPI_LOGICAL, "MPI_LOGICAL", sizeof(int), LOG, fill_logical, eq_int_},
      {MPI_2INTEGER, "MPI_2INTEGER", sizeof(int_int), PAIR, fill_int_int, eq_int_int},
      {MPI_2REAL, "MPI_2REAL", sizeof(real_pair), PAIR, fill_real_pair, eq_real_pair},
      {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", sizeof(double_pair), PAIR, fill_double_pair,
       eq_double_pair},
  };
  const OpCase ops[] = {
      {MPI_MAX, "MPI_MAX", INT | FINT | FLT},
      {MPI_MIN, "MPI_MIN", INT | FINT | FLT},
      {MPI_SUM, "MPI_SUM", INT | FINT | FLT | CPX},
      {MPI_PROD, "MPI_PROD", INT | FINT | FLT | CPX},
      {MPI_LAND, "MPI_LAND", INT | LOG},
      {MPI_LOR, "MPI_LOR", INT | LOG},
      {MPI_LXOR, "MPI_LXOR", INT | LOG},
      {MPI_BAND, "MPI_BAND", INT | FINT | BYT},
      {MPI_BOR, "MPI_BOR", INT | FINT | BYT},
      {MPI_BXOR, "MPI_BXOR", INT | FINT | BYT},
      {MPI_MAXLOC, "MPI_MAXLOC", PAIR},
      {MPI_MINLOC, "MPI_MINLOC", PAIR},
  };
  const int ntypes = (int)(sizeof types / sizeof types[0]);
  const int nops = (int)(sizeof ops / sizeof ops[0]);

  /* A contiguous derived type under predefined ops, and user ops. */
  MPI_Datatype pair_u, complex_t;
  MPI_Type_contiguous(3, MPI_DOUBLE, &three_doubles);
  MPI_Type_commit(&three_doubles);
  MPI_Type_dup(MPI_INT, &dup_int);
  MPI_Type_contiguous(2, MPI_UNSIGNED, &pair_u);
  MPI_Type_commit(&pair_u);
  MPI_Type_contiguous(2, MPI_DOUBLE, &complex_t);
  MPI_Type_commit(&complex_t);
  MPI_Op affine_op, complex_op;
  MPI_Op_create(affine, 0, &affine_op);
  MPI_Op_create(complex_product, 1, &complex_op);
  const TypeCase derived[] = {
      {three_doubles, "contiguous(3, MPI_DOUBLE)", 3 * sizeof(double), FLT, fill_dbl3, eq_dbl3},
      {dup_int, "dup(MPI_INT)", sizeof(int), INT, fill_int_, eq_int_},
  };
  const OpCase derived_ops[] = {{MPI_SUM, "MPI_SUM", FLT | INT},
                                {MPI_MAX, "MPI_MAX", FLT | INT},
                                {MPI_BXOR, "MPI_BXOR", INT}};
  const TypeCase user_types[] = {
      {pair_u, "contiguous(2, MPI_UNSIGNED)", 2 * sizeof(unsigned), 1, fill_affine, eq_pair_u},
      {complex_t, "contiguous(2, MPI_DOUBLE)", 2 * sizeof(double), 2, fill_cpair, eq_cpair},
  };
  const OpCase user_ops[] = {{affine_op, "affine (not commutative)", 1},
                             {complex_op, "complex product", 2}};

  MPI_Comm dup, split;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &split); /* reversed order */
  const MPI_Comm comms[] = {MPI_COMM_WORLD, dup, split};
  const char* comm_names[] = {"MPI_COMM_WORLD", "a duplicate", "a split (reversed ranks)"};
  for (int k = 0; k < 3; ++k) {
    run_matrix(comms[k], comm_names[k], types, ntypes, ops, nops);
    /* Open MPI alone refuses these (MPI_ERR_OP); the library serves them. */
    if (library_on) run_matrix(comms[k], comm_names[k], derived, 2, derived_ops, 3);
    run_matrix(comms[k], comm_names[k], user_types, 2, user_ops, 2);
  }
  /* Long vectors: many chunks through the node level, or with two
   * processes the single copy (20 KB: one receiver folds alone, 80 KB: it
   * shares the fold, 400 KB: pieces of a chunk); the middle one's root is
   * the last rank. */
  int world_n;
  MPI_Comm_size(MPI_COMM_WORLD, &world_n);
  for (int c = 0; c < NCOLL; ++c) {
    run_one(c, &types[13], MPI_SUM, "MPI_SUM", 5000, (c + 1) % 2, 0, MPI_COMM_WORLD,
            "MPI_COMM_WORLD", 5);
    run_one(c, &types[13], MPI_SUM, "MPI_SUM", 20000, c % 2, world_n - 1, MPI_COMM_WORLD,
            "MPI_COMM_WORLD", 6);
    run_one(c, &types[13], MPI_SUM, "MPI_SUM", 100000, 0, 0, MPI_COMM_WORLD, "MPI_COMM_WORLD", 7);
    run_one(c, &user_types[0], affine_op, "affine", 50000, c % 2, 0, dup, "a duplicate", 9);
  }
  random_doubles(MPI_COMM_WORLD, library_on);
  remade_communicators();
  bad_arguments(MPI_COMM_WORLD, library_on);

  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  MPI_Op_free(&affine_op);
  MPI_Op_free(&complex_op);
  MPI_Type_free(&three_doubles);
  MPI_Type_free(&dup_int);
  MPI_Type_free(&pair_u);
  MPI_Type_free(&complex_t);

  int all_failures = 0;
  PMPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0) {
    printf("dropin_test: %d checks per rank, %d failures in all (library %s)\n", checks,
           all_failures, library_on ? "on" : "off");
  }
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
