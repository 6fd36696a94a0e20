/* What the drop-in library says (docs/mpi_dropin.md, "Errors" and
 * "Control"), in a program written against MPI alone. Run by
 * dropin_words_test.sh with the library preloaded, HREDUCE_MPI_VERBOSE=1
 * and HREDUCE_MPI_WARMUP_CALLS=2, on 3 processes of one node:
 *
 *   messages   processes that disagree on the count: MPI_Error_string is
 *              the documented text, naming the MPI datatype, for every
 *              predefined type the library serves, contiguous and dup'ed
 *              types and a type the program named; a text longer than
 *              MPI_MAX_ERROR_STRING is shortened at a clause or word,
 *              marked " [...]". A team broken by a run-ahead failure says
 *              the way back, which works.
 *   unserved   only nonblocking calls and warm-up calls: no team is built.
 *   silent     no reduction at all.
 *   tally      a known number of calls of each MPI function, some handed
 *              on (warm-up, a derived type, nonblocking), each result
 *              checked against MPI's own.
 *
 * The script checks the verbose lines of the last three. Exits non-zero on
 * any difference. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0, rank = 0, size = 0;

static void fail(const char* what, const char* got, const char* expected) {
  ++failures;
  fprintf(stderr, "rank %d: %s\n  got:      %s\n  expected: %s\n", rank, what, got, expected);
}

static void error_text(int rc, char* text) {
  int length = 0;
  text[0] = '\0';
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &length);
}

/* The documented text of a count disagreement: process 0 (count 4) against
 * the last process (count 3), the first that differs from process 0. */
static void count_disagreement(char* out, size_t room, const char* kind, const char* type,
                               const char* op, int ours, int theirs) {
  snprintf(out, room,
           "hreduce: %s: processes disagree on the call: process 0 called %s with count %d, "
           "element type %s, op %s; process %d called %s with count %d, element type %s, op %s",
           kind, kind, ours, type, op, size - 1, kind, theirs, type, op);
}

/* `got` is `full`, or `full` shortened where a clause or word ends, marked. */
static void check_whole(const char* what, const char* got, const char* full) {
  const size_t n = strlen(got), mark = strlen(" [...]");
  if (n > MPI_MAX_ERROR_STRING - 1) fail(what, got, "at most MPI_MAX_ERROR_STRING - 1 characters");
  if (strcmp(got, full) == 0) return;
  if (strlen(full) <= MPI_MAX_ERROR_STRING - 1) {
    fail(what, got, full);
  } else if (n < mark || strcmp(got + n - mark, " [...]") != 0) {
    fail(what, got, "a shortened text, ending \" [...]\"");
  } else if (strncmp(got, full, n - mark) != 0 || strchr(" ;,", full[n - mark]) == NULL) {
    fail(what, got, full);
  }
}

typedef struct {
  MPI_Datatype type;
  const char* name;
  MPI_Op op;
  const char* op_name;
} Case;

#define C(type, op) \
  { type, #type, op, #op }

static void disagreeing_counts(MPI_Comm comm) {
  const Case cases[] = {
      C(MPI_SIGNED_CHAR, MPI_SUM),
      C(MPI_UNSIGNED_CHAR, MPI_SUM),
      C(MPI_BYTE, MPI_BAND),
      C(MPI_SHORT, MPI_SUM),
      C(MPI_UNSIGNED_SHORT, MPI_SUM),
      C(MPI_INT, MPI_SUM),
      C(MPI_UNSIGNED, MPI_SUM),
      C(MPI_LONG, MPI_SUM),
      C(MPI_UNSIGNED_LONG, MPI_SUM),
      {MPI_LONG_LONG, "MPI_LONG_LONG", MPI_SUM, "MPI_SUM"},
      C(MPI_UNSIGNED_LONG_LONG, MPI_MAX),
      C(MPI_INT8_T, MPI_SUM),
      C(MPI_UINT8_T, MPI_SUM),
      C(MPI_INT16_T, MPI_SUM),
      C(MPI_UINT16_T, MPI_SUM),
      C(MPI_INT32_T, MPI_SUM),
      C(MPI_UINT32_T, MPI_SUM),
      C(MPI_INT64_T, MPI_SUM),
      C(MPI_UINT64_T, MPI_SUM),
      C(MPI_AINT, MPI_SUM),
      C(MPI_OFFSET, MPI_SUM),
      C(MPI_COUNT, MPI_SUM),
      C(MPI_FLOAT, MPI_SUM),
      C(MPI_DOUBLE, MPI_SUM),
      C(MPI_LONG_DOUBLE, MPI_MIN),
      C(MPI_C_BOOL, MPI_LAND),
      C(MPI_CXX_BOOL, MPI_LOR),
      C(MPI_C_FLOAT_COMPLEX, MPI_SUM),
      C(MPI_C_DOUBLE_COMPLEX, MPI_PROD),
      C(MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM),
      C(MPI_CXX_FLOAT_COMPLEX, MPI_SUM),
      C(MPI_CXX_DOUBLE_COMPLEX, MPI_SUM),
      C(MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_SUM),
      C(MPI_FLOAT_INT, MPI_MAXLOC),
      C(MPI_DOUBLE_INT, MPI_MAXLOC),
      C(MPI_LONG_INT, MPI_MINLOC),
      C(MPI_2INT, MPI_MAXLOC),
      C(MPI_SHORT_INT, MPI_MINLOC),
      C(MPI_LONG_DOUBLE_INT, MPI_MAXLOC),
      C(MPI_INTEGER, MPI_SUM),
      C(MPI_INTEGER1, MPI_SUM),
      C(MPI_INTEGER2, MPI_SUM),
      C(MPI_INTEGER4, MPI_SUM),
      C(MPI_INTEGER8, MPI_SUM),
      C(MPI_REAL, MPI_SUM),
      C(MPI_REAL4, MPI_SUM),
      C(MPI_REAL8, MPI_SUM),
      C(MPI_DOUBLE_PRECISION, MPI_SUM),
      C(MPI_COMPLEX, MPI_SUM),
      C(MPI_DOUBLE_COMPLEX, MPI_SUM),
      C(MPI_COMPLEX8, MPI_SUM),
      C(MPI_COMPLEX16, MPI_SUM),
      C(MPI_LOGICAL, MPI_LXOR),
      C(MPI_2REAL, MPI_MAXLOC),
      C(MPI_2DOUBLE_PRECISION, MPI_MINLOC),
      C(MPI_2INTEGER, MPI_MAXLOC),
  };
  _Alignas(64) static unsigned char in[4096], out[4096];
  char got[MPI_MAX_ERROR_STRING], expected[1024], what[128];
  const int count = rank == size - 1 ? 3 : 4;
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
    if (cases[k].type == MPI_DATATYPE_NULL) continue; /* not in this Open MPI */
    int rc = MPI_Allreduce(in, out, count, cases[k].type, cases[k].op, comm);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    error_text(rc, got);
    count_disagreement(expected, sizeof expected, "allreduce", cases[k].name, cases[k].op_name, 4,
                       3);
    snprintf(what, sizeof what, "the count disagreement's text on %s", cases[k].name);
    if (cls != MPI_ERR_COUNT) fail(what, got, "error class MPI_ERR_COUNT");
    check_whole(what, got, expected);
  }
}

/* A user op on named pairs of doubles: their sum. */
static void pair_sum(void* in, void* inout, int* n, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < 2 * *n; ++i) ((double*)inout)[i] += ((const double*)in)[i];
}

static void derived_types(MPI_Comm comm) {
  MPI_Datatype three, dup, named;
  MPI_Type_contiguous(3, MPI_DOUBLE, &three);
  MPI_Type_commit(&three);
  MPI_Type_dup(MPI_INT, &dup);
  MPI_Type_contiguous(2, MPI_DOUBLE, &named);
  MPI_Type_commit(&named);
  /* 60 characters: the text with two of them is longer than MPI keeps. */
  const char* long_name = "pair_of_doubles_for_the_boundary_layer_residual_of_block_042";
  MPI_Type_set_name(named, (char*)long_name);
  MPI_Op sum;
  MPI_Op_create(pair_sum, 1, &sum);
  double in[64] = {0}, out[64];
  char got[MPI_MAX_ERROR_STRING], expected[1024];
  const int last = rank == size - 1;

  int rc = MPI_Allreduce(in, out, last ? 3 : 4, three, MPI_SUM, comm);
  error_text(rc, got);
  /* A predefined op counts the doubles inside. */
  count_disagreement(expected, sizeof expected, "allreduce",
                     "MPI_DOUBLE (in MPI_Type_contiguous(3, MPI_DOUBLE))", "MPI_SUM", 12, 9);
  check_whole("a contiguous type's name", got, expected);

  rc = MPI_Allreduce(in, out, last ? 3 : 4, dup, MPI_MAX, comm);
  error_text(rc, got);
  count_disagreement(expected, sizeof expected, "allreduce", "MPI_INT (in MPI_Type_dup(MPI_INT))",
                     "MPI_MAX", 4, 3);
  check_whole("a dup'ed type's name", got, expected);

  rc = MPI_Allreduce(in, out, last ? 3 : 4, named, sum, comm);
  error_text(rc, got);
  count_disagreement(expected, sizeof expected, "allreduce", long_name, "a user op (MPI_Op_create)",
                     4, 3);
  check_whole("a named type under a user op, shortened", got, expected);
  if (strlen(expected) <= MPI_MAX_ERROR_STRING - 1) {
    fail("the long text's premise", expected, "longer than MPI_MAX_ERROR_STRING - 1");
  }
  MPI_Op_free(&sum);
  MPI_Type_free(&three);
  MPI_Type_free(&dup);
  MPI_Type_free(&named);
}

/* 3 processes, a 1-element reduce whose roots disagree: processes 1 and 2
 * only contribute and leave, process 0 finds it and the team breaks. Every
 * process's error says the way back, and the way back works. */
static void broken_team(void) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  double x = 1, y = 0;
  for (int k = 0; k < 4; ++k) MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
  char got[MPI_MAX_ERROR_STRING];
  const char* way_back =
      "(the way back: use another communicator, e.g. MPI_Comm_dup of a working one)";
  int failed_at = -1;
  for (int call = 0; call < 10; ++call) {
    /* Call 0 disagrees; later ones agree, on a team that broke. The last
     * is an allreduce: every process waits for every other in it. */
    const int root = call == 0 && rank == 1 ? 2 : 0;
    int rc = call < 9 ? MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, root, comm)
                      : MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (rc == MPI_SUCCESS || failed_at >= 0) continue;
    failed_at = call;
    error_text(rc, got);
    const size_t n = strlen(got), w = strlen(way_back);
    if (n < w || strcmp(got + n - w, way_back) != 0) fail("the way back", got, way_back);
    if (strstr(got, "resynchronize") != NULL) fail("the way back", got, "no Team::resynchronize()");
    if (n > MPI_MAX_ERROR_STRING - 1) fail("the way back", got, "within MPI_MAX_ERROR_STRING");
  }
  if (failed_at < 0) fail("the broken team", "no error in 10 calls", "an error");
  if (rank == 0 && failed_at != 0)
    fail("the broken team", "a later call", "call 0 fails on rank 0");
  MPI_Comm_free(&comm);
  /* The way back: a new communicator serves again (past its warm-up). */
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  for (int k = 0; k < 5; ++k) {
    x = rank + k;
    y = -1;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
    double oracle = -2;
    PMPI_Allreduce(&x, &oracle, 1, MPI_DOUBLE, MPI_SUM, comm);
    if (y != oracle) fail("allreduce on a new communicator", "a different sum", "MPI's");
  }
  MPI_Comm_free(&comm);
}

/* Only calls that build no team: nonblocking ones, and one blocking call
 * fewer than the warm-up on each of two communicators. */
static void unserved(void) {
  int x = rank, y[8];
  MPI_Request requests[6];
  MPI_Iallreduce(&x, &y[0], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[0]);
  MPI_Ireduce(&x, &y[1], 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &requests[1]);
  MPI_Iscan(&x, &y[2], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[2]);
  MPI_Iexscan(&x, &y[3], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[3]);
  int counts[64];
  for (int r = 0; r < size; ++r) counts[r] = 1;
  int many[64];
  for (int r = 0; r < size; ++r) many[r] = r; /* block r sums to r * size */
  MPI_Ireduce_scatter(many, &y[4], counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[4]);
  MPI_Ireduce_scatter_block(many, &y[5], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[5]);
  MPI_Waitall(6, requests, MPI_STATUSES_IGNORE);
  const int total = size * (size - 1) / 2;
  if (y[0] != total || y[4] != rank * size || y[5] != rank * size) {
    fail("a nonblocking result", "a different value", "the sum over ranks");
  }
  MPI_Allreduce(&x, &y[6], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Allreduce(&x, &y[7], 1, MPI_INT, MPI_SUM, dup);
  MPI_Comm_free(&dup);
  if (y[6] != total || y[7] != total) fail("a warm-up result", "a different value", "the sum");
}

/* dropin_words_test.sh expects these per-function lines from every process
 * (HREDUCE_MPI_WARMUP_CALLS=2: MPI_COMM_WORLD's first two calls, both
 * MPI_Allreduce, go to PMPI):
 *   MPI_Allreduce 3 served, 2 handed on
 *   MPI_Reduce 4 served, 1 handed on          (a vector type: handed on)
 *   MPI_Reduce_scatter 2 served, 0 handed on
 *   MPI_Reduce_scatter_block 3 served, 0 handed on   (one of no elements)
 *   MPI_Scan 3 served, 0 handed on
 *   MPI_Exscan 1 served, 0 handed on
 *   MPI_Iallreduce 1 served, 0 handed on
 *   MPI_Ireduce 2 served, 0 handed on
 * and no line for the functions it never calls. */
/* A sum over the vector type of tally(): two ints, a stride of two. */
static void spread_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* a = in;
  int* b = inout;
  for (int k = 0; k < *len; ++k) b[3 * k] += a[3 * k], b[3 * k + 2] += a[3 * k + 2];
}

static void tally(void) {
  const MPI_Comm world = MPI_COMM_WORLD;
  int x = rank + 1, y = 0, oracle = 0;
  for (int k = 0; k < 5; ++k) {
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, world);
    PMPI_Allreduce(&x, &oracle, 1, MPI_INT, MPI_SUM, world);
    if (y != oracle) fail("MPI_Allreduce", "a different sum", "MPI's");
  }
  for (int k = 0; k < 4; ++k) {
    y = oracle = 0;
    MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, k % size, world);
    PMPI_Reduce(&x, &oracle, 1, MPI_INT, MPI_SUM, k % size, world);
    if (y != oracle) fail("MPI_Reduce", "a different sum", "MPI's");
  }
  MPI_Datatype pair;
  MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int spread[4] = {x, -1, x, -1}, got[4] = {0, 0, 0, 0};
  MPI_Op spread_op;
  MPI_Op_create(spread_sum, 1, &spread_op);
  MPI_Reduce(spread, got, 1, pair, spread_op, 0, world);
  MPI_Op_free(&spread_op);
  if (rank == 0 && got[0] != size * (size + 1) / 2) fail("MPI_Reduce, vector", "a sum", "MPI's");
  MPI_Type_free(&pair);
  int many[64], counts[64], block = 0;
  for (int r = 0; r < size; ++r) many[r] = r + x, counts[r] = 1;
  for (int k = 0; k < 2; ++k) {
    MPI_Reduce_scatter(many, &y, counts, MPI_INT, MPI_SUM, world);
    PMPI_Reduce_scatter(many, &oracle, counts, MPI_INT, MPI_SUM, world);
    if (y != oracle) fail("MPI_Reduce_scatter", "a different sum", "MPI's");
    MPI_Reduce_scatter_block(many, &block, 1, MPI_INT, MPI_SUM, world);
    if (block != oracle) fail("MPI_Reduce_scatter_block", "a different sum", "MPI's");
  }
  block = -7;
  MPI_Reduce_scatter_block(many, &block, 0, MPI_INT, MPI_SUM, world);
  if (block != -7) fail("MPI_Reduce_scatter_block of 0", "a changed output", "untouched");
  for (int k = 0; k < 3; ++k) {
    MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, world);
    PMPI_Scan(&x, &oracle, 1, MPI_INT, MPI_SUM, world);
    if (y != oracle) fail("MPI_Scan", "a different sum", "MPI's");
  }
  MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, world);
  PMPI_Exscan(&x, &oracle, 1, MPI_INT, MPI_SUM, world);
  if (rank > 0 && y != oracle) fail("MPI_Exscan", "a different sum", "MPI's");
  MPI_Request requests[3];
  int i[3];
  MPI_Iallreduce(&x, &i[0], 1, MPI_INT, MPI_SUM, world, &requests[0]);
  MPI_Ireduce(&x, &i[1], 1, MPI_INT, MPI_SUM, 0, world, &requests[1]);
  MPI_Ireduce(&x, &i[2], 1, MPI_INT, MPI_MAX, 0, world, &requests[2]);
  MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
  if (i[0] != size * (size + 1) / 2) fail("MPI_Iallreduce", "a different sum", "the sum");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "messages";
  if (strcmp(mode, "messages") == 0) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    double x[4] = {0}, y[4];
    for (int k = 0; k < 3; ++k) MPI_Allreduce(x, y, 4, MPI_DOUBLE, MPI_SUM, comm); /* warm */
    disagreeing_counts(comm);
    derived_types(comm);
    MPI_Comm_free(&comm);
    broken_team();
  } else if (strcmp(mode, "unserved") == 0) {
    unserved();
  } else if (strcmp(mode, "tally") == 0) {
    tally();
  } else if (strcmp(mode, "silent") != 0) {
    fprintf(stderr, "unknown mode %s\n", mode);
    failures = 1;
  }
  int all = 0;
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("dropin_words_test %s: %d failures in all\n", mode, all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
