/* The nonblocking and persistent reductions through the drop-in, checked
 * against MPI's own blocking collectives (PMPI_*) as the oracle: every
 * call x sum, MAXLOC and a non-commutative user op x in place, one and
 * several started at once and completed in every way MPI offers (Wait,
 * Test loops in reverse, Waitall mixed with point-to-point requests,
 * Waitany, Waitsome, Testsome, Testall, Request_get_status), persistent
 * requests started again and again (Start, Startall), a request freed
 * while active, MPI_Cancel refused, persistent requests made before
 * their communicator's team exists, requests that outlive their
 * communicator, and a communicator whose reductions are all nonblocking.
 *
 * Argument: "single" initialises with MPI_THREAD_SINGLE (served on one
 * node only: across nodes the calls' own thread needs MPI_THREAD_MULTIPLE),
 * anything else MPI_THREAD_MULTIPLE. "kill": rank 1 dies (SIGKILL) while
 * every process has nonblocking calls outstanding; the others must see
 * their requests fail, and say so, within the team's timeout. */
#include <mpi.h>
// Open MPI's extensions (MPIX_*_init), which need mpi.h first.
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int checks = 0, failures = 0, rank = 0, size = 1;

#define CHECK(cond, ...)                          \
  do {                                            \
    ++checks;                                     \
    if (!(cond)) {                                \
      ++failures;                                 \
      fprintf(stderr, "rank %d: FAILED: ", rank); \
      fprintf(stderr, __VA_ARGS__);               \
      fputc('\n', stderr);                        \
    }                                             \
  } while (0)

typedef struct {
  double value;
  int index;
} DoubleInt;

typedef struct {
  const char* name;
  MPI_Datatype type;
  MPI_Op op;
  size_t elem; /* bytes */
  void (*fill)(void* buffer, int n, int r, int salt);
  int (*same)(const void* a, const void* b); /* one element; null: bytewise */
} Case;

static void fill_int(void* b, int n, int r, int salt) {
  for (int i = 0; i < n; ++i) ((int*)b)[i] = (r * 7 + i * 3 + salt) % 11 - 5;
}
static void fill_double(void* b, int n, int r, int salt) {
  for (int i = 0; i < n; ++i) ((double*)b)[i] = (r * 5 + i + salt) % 9 - 4; /* exact sums */
}
static void fill_double_int(void* b, int n, int r, int salt) {
  for (int i = 0; i < n; ++i) {
    ((DoubleInt*)b)[i].value = (r * 5 + i * 3 + salt) % 7;
    ((DoubleInt*)b)[i].index = r;
  }
}
/* The pair's members, not the padding MPI leaves alone. */
static int same_double_int(const void* a, const void* b) {
  const DoubleInt *x = a, *y = b;
  return x->value == y->value && x->index == y->index;
}
/* Affine maps x -> a x + b, composed in rank order: not commutative. */
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
static void fill_affine(void* b, int n, int r, int salt) {
  for (int i = 0; i < n; ++i) {
    ((unsigned*)b)[2 * i] = (unsigned)(2 * r + 3 + i % 5 + salt);
    ((unsigned*)b)[2 * i + 1] = (unsigned)(r * 7919 + i + salt);
  }
}

enum { ALLREDUCE, REDUCE, REDUCE_SCATTER, REDUCE_SCATTER_BLOCK, SCAN, EXSCAN, NCOLL };
static const char* coll_name[] = {"allreduce", "reduce", "reduce_scatter", "reduce_scatter_block",
                                  "scan",      "exscan"};

/* One call's buffers and shape. */
typedef struct {
  int coll, n, root, in_place, total, mine;
  int* counts;
  const Case* c;
  MPI_Comm comm;
  char *in, *ours, *theirs;
} Call;

static void prepare(Call* k, int coll, const Case* c, int n, int in_place, MPI_Comm comm) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  memset(k, 0, sizeof *k);
  k->coll = coll, k->c = c, k->n = n, k->comm = comm, k->root = p - 1;
  k->counts = malloc(sizeof(int) * (size_t)p);
  k->total = n, k->mine = n;
  if (coll == REDUCE_SCATTER) {
    k->total = 0;
    for (int i = 0; i < p; ++i) k->total += k->counts[i] = n + i % 2;
    k->mine = k->counts[r];
  } else if (coll == REDUCE_SCATTER_BLOCK) {
    k->total = n * p;
  }
  /* In place belongs to every process but a reduce's non-roots. */
  k->in_place = in_place && !(coll == REDUCE && r != k->root);
  const size_t bytes = (size_t)k->total * c->elem + 16;
  k->in = calloc(1, bytes), k->ours = calloc(1, bytes), k->theirs = calloc(1, bytes);
}

static void release(Call* k) { free(k->counts), free(k->in), free(k->ours), free(k->theirs); }

/* The input of start `salt`; in place, it goes into our output buffer. */
static void fill(Call* k, int salt) {
  int r;
  MPI_Comm_rank(k->comm, &r);
  k->c->fill(k->in, k->total, r, salt);
  memset(k->ours, 0x5a, (size_t)k->total * k->c->elem);
  if (k->in_place) memcpy(k->ours, k->in, (size_t)k->total * k->c->elem);
}

static int start(Call* k, int persistent, MPI_Request* q) {
  const void* s = k->in_place ? MPI_IN_PLACE : k->in;
  void* o = k->ours;
  const Case* c = k->c;
  switch (k->coll) {
    case ALLREDUCE:
      return persistent ? MPIX_Allreduce_init(s, o, k->n, c->type, c->op, k->comm, MPI_INFO_NULL, q)
                        : MPI_Iallreduce(s, o, k->n, c->type, c->op, k->comm, q);
    case REDUCE:
      return persistent
                 ? MPIX_Reduce_init(s, o, k->n, c->type, c->op, k->root, k->comm, MPI_INFO_NULL, q)
                 : MPI_Ireduce(s, o, k->n, c->type, c->op, k->root, k->comm, q);
    case REDUCE_SCATTER:
      return persistent ? MPIX_Reduce_scatter_init(s, o, k->counts, c->type, c->op, k->comm,
                                                   MPI_INFO_NULL, q)
                        : MPI_Ireduce_scatter(s, o, k->counts, c->type, c->op, k->comm, q);
    case REDUCE_SCATTER_BLOCK:
      return persistent ? MPIX_Reduce_scatter_block_init(s, o, k->n, c->type, c->op, k->comm,
                                                         MPI_INFO_NULL, q)
                        : MPI_Ireduce_scatter_block(s, o, k->n, c->type, c->op, k->comm, q);
    case SCAN:
      return persistent ? MPIX_Scan_init(s, o, k->n, c->type, c->op, k->comm, MPI_INFO_NULL, q)
                        : MPI_Iscan(s, o, k->n, c->type, c->op, k->comm, q);
    default:
      return persistent ? MPIX_Exscan_init(s, o, k->n, c->type, c->op, k->comm, MPI_INFO_NULL, q)
                        : MPI_Iexscan(s, o, k->n, c->type, c->op, k->comm, q);
  }
}

/* MPI's own blocking answer, into `theirs`. */
static void oracle(Call* k) {
  const Case* c = k->c;
  void* t = k->theirs;
  switch (k->coll) {
    case ALLREDUCE: PMPI_Allreduce(k->in, t, k->n, c->type, c->op, k->comm); break;
    case REDUCE: PMPI_Reduce(k->in, t, k->n, c->type, c->op, k->root, k->comm); break;
    case REDUCE_SCATTER: PMPI_Reduce_scatter(k->in, t, k->counts, c->type, c->op, k->comm); break;
    case REDUCE_SCATTER_BLOCK:
      PMPI_Reduce_scatter_block(k->in, t, k->n, c->type, c->op, k->comm);
      break;
    case SCAN: PMPI_Scan(k->in, t, k->n, c->type, c->op, k->comm); break;
    default: PMPI_Exscan(k->in, t, k->n, c->type, c->op, k->comm); break;
  }
}

static void compare(Call* k, const char* how) {
  int r;
  MPI_Comm_rank(k->comm, &r);
  oracle(k);
  if (k->coll == REDUCE && r != k->root) return;
  if (k->coll == EXSCAN && r == 0) return; /* undefined there */
  size_t elems = (size_t)k->n;
  if (k->coll == REDUCE_SCATTER) elems = (size_t)k->mine;
  int same = 1;
  for (size_t i = 0; i < elems && same; ++i) {
    const char *a = k->ours + i * k->c->elem, *b = k->theirs + i * k->c->elem;
    same = k->c->same ? k->c->same(a, b) : memcmp(a, b, k->c->elem) == 0;
  }
  CHECK(same, "%s %s %s n=%d%s: differs from PMPI", how, coll_name[k->coll], k->c->name, k->n,
        k->in_place ? " in place" : "");
}

/* Every call x case x in place x count, started then waited; and as a
 * persistent request started three times. */
static void matrix(const Case* cases, int ncases, MPI_Comm comm) {
  const int counts[] = {1, 5, 3000, 70000};
  for (int coll = 0; coll < NCOLL; ++coll)
    for (int ci = 0; ci < ncases; ++ci)
      for (int ip = 0; ip < 2; ++ip)
        for (int ni = 0; ni < 4; ++ni) {
          Call k;
          if (getenv("DROPIN_TEST_TRACE"))
            fprintf(stderr, "rank %d: %s %s n=%d in place %d\n", rank, coll_name[coll],
                    cases[ci].name, counts[ni], ip);
          prepare(&k, coll, &cases[ci], counts[ni], ip, comm);
          MPI_Request q;
          fill(&k, ni);
          CHECK(start(&k, 0, &q) == MPI_SUCCESS, "start");
          CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait");
          CHECK(q == MPI_REQUEST_NULL, "a completed request is MPI_REQUEST_NULL");
          compare(&k, "nonblocking");
          CHECK(start(&k, 1, &q) == MPI_SUCCESS, "init");
          for (int round = 0; round < 3; ++round) {
            fill(&k, round * 13 + ni);
            CHECK(MPI_Start(&q) == MPI_SUCCESS, "MPI_Start");
            MPI_Status st;
            CHECK(MPI_Wait(&q, &st) == MPI_SUCCESS, "wait (persistent)");
            CHECK(q != MPI_REQUEST_NULL, "a persistent request stays");
            compare(&k, "persistent");
          }
          CHECK(MPI_Request_free(&q) == MPI_SUCCESS && q == MPI_REQUEST_NULL, "free");
          release(&k);
        }
}

/* Ints, element by element, whatever the datatype holds of them. */
static void add_ints(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  for (int i = 0; i < *len * bytes / (int)sizeof(int); ++i) ((int*)inout)[i] += ((int*)in)[i];
}
static void max_ints(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  for (int i = 0; i < *len * bytes / (int)sizeof(int); ++i) {
    if (((int*)in)[i] > ((int*)inout)[i]) ((int*)inout)[i] = ((int*)in)[i];
  }
}

/* An ended call is kept for the next one with its shell, combiner and
 * team. A datatype, op or communicator freed and made anew (MPI often
 * gives it the old handle) must not keep its old meaning there; nor may a
 * predefined pair keep the last call's op. */
static void handles_made_anew(MPI_Comm comm) {
  enum { N = 7 };
  int r, in[3 * N], ours[3 * N], theirs[3 * N];
  MPI_Comm_rank(comm, &r);
  for (int i = 0; i < 3 * N; ++i) in[i] = (r * 7 + i * 3) % 11 - 5;
  MPI_Request q;
  for (int round = 0; round < 6; ++round) {
    const int per = round % 3 + 1; /* ints in one element of the datatype */
    MPI_Datatype t;
    MPI_Type_contiguous(per, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Op op;
    MPI_Op_create(round % 2 ? max_ints : add_ints, 1, &op);
    MPI_Comm c;
    MPI_Comm_dup(comm, &c);
    int x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c); /* builds its team */
    CHECK(MPI_Iallreduce(in, ours, N, t, op, c, &q) == MPI_SUCCESS, "Iallreduce, user op");
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait, user op");
    PMPI_Allreduce(in, theirs, N, t, op, c);
    CHECK(memcmp(ours, theirs, sizeof(int) * (size_t)(per * N)) == 0,
          "round %d: a user op on %d ints made anew differs from PMPI", round, per);
    MPI_Comm_free(&c);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
  }
  for (int round = 0; round < 4; ++round) {
    const MPI_Op predefined = round % 2 ? MPI_MAX : MPI_SUM;
    CHECK(MPI_Iallreduce(in, ours, 3 * N, MPI_INT, predefined, comm, &q) == MPI_SUCCESS,
          "Iallreduce, MPI_INT");
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait, MPI_INT");
    PMPI_Allreduce(in, theirs, 3 * N, MPI_INT, predefined, comm);
    CHECK(memcmp(ours, theirs, sizeof(int) * 3 * N) == 0, "round %d: MPI_INT with %s differs",
          round, round % 2 ? "MPI_MAX" : "MPI_SUM");
  }
}

/* Several outstanding, completed in reverse by Test loops; Testall;
 * Waitany; Waitsome; Testsome; Request_get_status. */
static void several(const Case* sum, MPI_Comm comm) {
  enum { K = 6 };
  Call k[K];
  MPI_Request q[K];
  for (int i = 0; i < K; ++i) {
    prepare(&k[i], i % NCOLL, sum, 100 + 37 * i, 0, comm);
    fill(&k[i], i);
  }
  for (int way = 0; way < 5; ++way) {
    for (int i = 0; i < K; ++i) {
      fill(&k[i], i + way);
      start(&k[i], 0, &q[i]);
    }
    if (way == 0) {
      for (int i = K - 1; i >= 0; --i) {
        int flag = 0;
        while (!flag) MPI_Test(&q[i], &flag, MPI_STATUS_IGNORE);
        CHECK(q[i] == MPI_REQUEST_NULL, "test: request null after completion");
      }
    } else if (way == 1) {
      int flag = 0;
      while (!flag) MPI_Testall(K, q, &flag, MPI_STATUSES_IGNORE);
    } else if (way == 2) {
      for (int done = 0; done < K; ++done) {
        int index = -1;
        MPI_Waitany(K, q, &index, MPI_STATUS_IGNORE);
        CHECK(index >= 0 && index < K && q[index] == MPI_REQUEST_NULL, "waitany index %d", index);
      }
      int index = 0;
      MPI_Waitany(K, q, &index, MPI_STATUS_IGNORE);
      CHECK(index == MPI_UNDEFINED, "waitany on nothing: MPI_UNDEFINED");
    } else if (way == 3) {
      int done = 0, out = 0, idx[K];
      MPI_Status st[K];
      while (done < K) {
        MPI_Waitsome(K, q, &out, idx, st);
        CHECK(out > 0, "waitsome completes something");
        done += out;
      }
      CHECK(done == K, "waitsome: %d of %d", done, K);
    } else {
      int done = 0, out = 0, idx[K];
      while (done < K) {
        int flag = 0;
        MPI_Request_get_status(q[K - 1], &flag, MPI_STATUS_IGNORE);
        MPI_Testsome(K, q, &out, idx, MPI_STATUSES_IGNORE);
        if (out != MPI_UNDEFINED) done += out;
      }
    }
    for (int i = 0; i < K; ++i) compare(&k[i], "several");
  }
  for (int i = 0; i < K; ++i) release(&k[i]);
}

/* Served requests beside point-to-point ones in one Waitall, and
 * persistent ones started together by Startall. */
static void mixed(const Case* sum, MPI_Comm comm) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  Call a, b;
  prepare(&a, ALLREDUCE, sum, 257, 0, comm);
  prepare(&b, REDUCE, sum, 4099, 0, comm);
  enum { M = 50000 };
  int* out = malloc(M * sizeof(int));
  int* in = malloc(M * sizeof(int));
  for (int round = 0; round < 4; ++round) {
    fill(&a, round), fill(&b, round + 1);
    for (int i = 0; i < M; ++i) out[i] = r * 1000 + i + round, in[i] = -1;
    MPI_Request q[4];
    MPI_Status st[4];
    start(&a, 0, &q[0]);
    MPI_Irecv(in, M, MPI_INT, (r + p - 1) % p, 7, comm, &q[1]);
    start(&b, 0, &q[2]);
    MPI_Isend(out, M, MPI_INT, (r + 1) % p, 7, comm, &q[3]);
    CHECK(MPI_Waitall(4, q, st) == MPI_SUCCESS, "mixed waitall");
    int got = 0;
    MPI_Get_count(&st[1], MPI_INT, &got);
    CHECK(got == M && st[1].MPI_SOURCE == (r + p - 1) % p, "the receive's status");
    int ok = 1;
    for (int i = 0; i < M; ++i) ok = ok && in[i] == ((r + p - 1) % p) * 1000 + i + round;
    CHECK(ok, "the point-to-point message beside the reductions");
    for (int i = 0; i < 4; ++i) CHECK(q[i] == MPI_REQUEST_NULL, "mixed: request %d null", i);
    compare(&a, "mixed"), compare(&b, "mixed");
  }
  MPI_Request pq[2];
  start(&a, 1, &pq[0]);
  start(&b, 1, &pq[1]);
  for (int round = 0; round < 3; ++round) {
    fill(&a, round + 5), fill(&b, round + 6);
    MPI_Startall(2, pq);
    MPI_Waitall(2, pq, MPI_STATUSES_IGNORE);
    compare(&a, "startall"), compare(&b, "startall");
  }
  MPI_Request_free(&pq[0]);
  MPI_Request_free(&pq[1]);
  /* Freed while active: the call still completes everywhere. */
  MPI_Request q;
  fill(&a, 99);
  start(&a, 0, &q);
  MPI_Request_free(&q);
  CHECK(q == MPI_REQUEST_NULL, "freed request is null");
  double x = 1, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm); /* after the freed one, in order */
  CHECK(y == p, "a blocking call after a freed nonblocking one");
  compare(&a, "freed while active");
  /* MPI forbids cancelling a collective. */
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  start(&a, 0, &q);
  const int rc = MPI_Cancel(&q);
  CHECK(rc != MPI_SUCCESS, "MPI_Cancel of a reduction is refused");
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
  free(in), free(out);
  release(&a), release(&b);
}

/* Rank 1 kills itself with calls outstanding; the others wait for theirs,
 * which must fail (not hang), then leave at once: MPI_Finalize cannot
 * meet a dead process. */
static void killed(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  double x[1000], y[3][1000];
  for (int i = 0; i < 1000; ++i) x[i] = rank + i;
  MPI_Allreduce(x, y[0], 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* builds the team */
  MPI_Request q[3];
  for (int k = 0; k < 3; ++k) {
    if (rank == 1 && k == 1) raise(SIGKILL);
    MPI_Iallreduce(x, y[k], 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q[k]);
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  const int rc = MPI_Waitall(3, q, MPI_STATUSES_IGNORE);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    printf("rank %d: the requests failed after %.2f s, as they must\n", rank, seconds);
  } else {
    printf("rank %d: FAILED: the requests completed although rank 1 died\n", rank);
  }
  fflush(stdout);
  _exit(rc != MPI_SUCCESS ? 0 : 1);
}

/* Persistent requests made on a communicator that has no team yet (a
 * blocking reduction builds it): MPI serves their starts until a blocking
 * call builds the team, the drop-in from the next start on (the script
 * checks each *_init function says so), under the same handle, a copy of
 * which completes the call. One request is freed before the team exists.
 * A non-commutative op, half of them in place. */
static void made_before_team(const Case* cases) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  Call k[NCOLL];
  MPI_Request q[NCOLL], copies[NCOLL];
  for (int i = 0; i < NCOLL; ++i) {
    prepare(&k[i], i, &cases[i % 2 == 0 ? 3 : 0], 5 + i, i % 2, comm);
    CHECK(start(&k[i], 1, &q[i]) == MPI_SUCCESS, "init before the team");
    copies[i] = q[i];
  }
  Call dropped;
  MPI_Request dropped_q;
  prepare(&dropped, ALLREDUCE, &cases[0], 3, 0, comm);
  CHECK(start(&dropped, 1, &dropped_q) == MPI_SUCCESS, "init before the team");
  CHECK(MPI_Request_free(&dropped_q) == MPI_SUCCESS && dropped_q == MPI_REQUEST_NULL, "free");
  release(&dropped);
  for (int round = 0; round < 4; ++round) {
    if (round == 2) {
      int x = 1, y = 0;
      MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm); /* builds the team */
      CHECK(y == size, "the blocking call that builds the team");
    }
    for (int i = 0; i < NCOLL; ++i) fill(&k[i], 7 * round + i);
    if (round % 2 == 0) {
      CHECK(MPI_Startall(NCOLL, q) == MPI_SUCCESS, "MPI_Startall");
      CHECK(MPI_Waitall(NCOLL, copies, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "MPI_Waitall");
    } else {
      for (int i = 0; i < NCOLL; ++i) CHECK(MPI_Start(&q[i]) == MPI_SUCCESS, "MPI_Start");
      for (int i = NCOLL - 1; i >= 0; --i) {
        CHECK(MPI_Wait(&copies[i], MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait");
      }
    }
    for (int i = 0; i < NCOLL; ++i) {
      CHECK(q[i] == copies[i], "the handle stays");
      compare(&k[i], round < 2 ? "persistent, before the team" : "persistent, after the team");
    }
  }
  for (int i = 0; i < NCOLL; ++i) {
    CHECK(MPI_Request_free(&q[i]) == MPI_SUCCESS && q[i] == MPI_REQUEST_NULL, "free");
    release(&k[i]);
  }
  MPI_Comm_free(&comm);
}

/* Requests that outlive their communicator: a served MPI_Iallreduce still
 * running at MPI_Comm_free ends normally (MPI's rule for pending
 * operations), and persistent requests, served and made before the team,
 * are freed after it. (Starting them again after MPI_Comm_free would go to
 * MPI, whose Open MPI 4.1 crashes in its own start there.) The oracle runs
 * on a twin communicator. */
static void outlives_comm(const Case* sum) {
  MPI_Comm comm, twin;
  MPI_Comm_dup(MPI_COMM_WORLD, &twin);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int x = 1, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm); /* builds the team */
  Call once, prepared;
  prepare(&once, ALLREDUCE, sum, 7, 0, comm);
  prepare(&prepared, REDUCE, sum, 9, 0, comm);
  MPI_Request q, p;
  CHECK(start(&prepared, 1, &p) == MPI_SUCCESS, "init");
  fill(&prepared, 1);
  CHECK(MPI_Start(&p) == MPI_SUCCESS && MPI_Wait(&p, MPI_STATUS_IGNORE) == MPI_SUCCESS, "start");
  prepared.comm = twin;
  compare(&prepared, "persistent, before MPI_Comm_free");
  prepared.comm = comm;
  fill(&once, 2);
  CHECK(start(&once, 0, &q) == MPI_SUCCESS, "start");
  MPI_Comm unbuilt;
  MPI_Comm_dup(MPI_COMM_WORLD, &unbuilt);
  Call early;
  prepare(&early, SCAN, sum, 4, 0, unbuilt);
  MPI_Request e;
  CHECK(start(&early, 1, &e) == MPI_SUCCESS, "init before the team");
  MPI_Comm_free(&unbuilt);
  MPI_Comm_free(&comm);
  CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS && q == MPI_REQUEST_NULL,
        "a call still running at MPI_Comm_free ends");
  once.comm = prepared.comm = early.comm = twin;
  compare(&once, "nonblocking, outliving its communicator");
  CHECK(MPI_Request_free(&p) == MPI_SUCCESS && MPI_Request_free(&e) == MPI_SUCCESS,
        "free after MPI_Comm_free");
  release(&once), release(&prepared), release(&early);
  MPI_Comm_free(&twin);
}

/* A communicator whose reductions are all nonblocking: MPI serves them
 * until its first barrier builds the team, the drop-in after it (the
 * script checks MPI_Iallreduce was handed on once, and MPIX_Scan_init's
 * request switched). */
static void nonblocking_only(const Case* sum) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  Call once, prepared;
  prepare(&once, ALLREDUCE, sum, 6, 0, comm);
  prepare(&prepared, SCAN, sum, 3, 1, comm);
  MPI_Request q, p;
  CHECK(start(&prepared, 1, &p) == MPI_SUCCESS, "init before the team");
  for (int round = 0; round < 2; ++round) {
    if (round == 1) CHECK(MPI_Barrier(comm) == MPI_SUCCESS, "the barrier that builds the team");
    fill(&once, round);
    CHECK(start(&once, 0, &q) == MPI_SUCCESS, "start");
    CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait");
    compare(&once,
            round == 0 ? "nonblocking, before the barrier" : "nonblocking, after the barrier");
    fill(&prepared, 2 + round);
    CHECK(MPI_Start(&p) == MPI_SUCCESS && MPI_Wait(&p, MPI_STATUS_IGNORE) == MPI_SUCCESS, "start");
    compare(&prepared, round == 0 ? "persistent, before the barrier" : "persistent, after it");
  }
  CHECK(MPI_Request_free(&p) == MPI_SUCCESS, "free");
  release(&once), release(&prepared);
  MPI_Comm_free(&comm);
}

int main(int argc, char** argv) {
  const int want =
      argc > 1 && strcmp(argv[1], "single") == 0 ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, want, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && strcmp(argv[1], "kill") == 0) killed();
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_UNSIGNED, &pair);
  MPI_Type_commit(&pair);
  MPI_Op compose;
  MPI_Op_create(affine, 0, &compose);
  const Case cases[] = {
      {"MPI_INT sum", MPI_INT, MPI_SUM, sizeof(int), fill_int, NULL},
      {"MPI_DOUBLE sum", MPI_DOUBLE, MPI_SUM, sizeof(double), fill_double, NULL},
      {"MPI_DOUBLE_INT maxloc", MPI_DOUBLE_INT, MPI_MAXLOC, sizeof(DoubleInt), fill_double_int,
       same_double_int},
      {"affine (not commutative)", pair, compose, 2 * sizeof(unsigned), fill_affine, NULL},
  };
  made_before_team(cases);
  outlives_comm(&cases[0]);
  nonblocking_only(&cases[0]);
  MPI_Comm halves;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves);
  MPI_Comm comms[] = {MPI_COMM_WORLD, halves};
  for (int ci = 0; ci < 2; ++ci) {
    /* A blocking call builds the communicator's team (a nonblocking one
     * never does: building is collective). */
    int x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comms[ci]);
    matrix(cases, 4, comms[ci]);
    handles_made_anew(comms[ci]);
    several(&cases[0], comms[ci]);
    mixed(&cases[0], comms[ci]);
  }
  MPI_Comm_free(&halves);
  MPI_Op_free(&compose);
  MPI_Type_free(&pair);
  int all = 0;
  PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%d checks, %d failures over all processes\n", checks, all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
