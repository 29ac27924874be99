/* The simulator's state, shared by sim.c (the thread program's ops) and
 * sim_async.c (mbarriers and tensor copies). Private to src/tir. */
#ifndef WV_SIM_H
#define WV_SIM_H

#include "target/target.h"
#include "tir/tir.h"

typedef union val {
  double f;
  int64_t i;
} val;

typedef struct swave {
  uint32_t pc;
  bool at_barrier, done;
  bool blocked; /* at an mbarrier wait whose phase has not completed */
  bool regs_blocked; /* at a setmaxnreg.inc the pool cannot serve yet */
  bool smem_touched; /* made an ordinary shared-memory access */
  bool at_turn;      /* at a T_TURNWAIT not yet made up */
  bool at_cluster;   /* at a T_CLUSTERBAR the cluster has not all reached */
  int turn_bar;      /* the barrier of its last T_TURNWAIT (0: none) */
  bool turns;        /* ran a turn (wait or pass) */
  uint64_t steps; /* instructions completed */
  int64_t regs;   /* registers per thread it holds (setmaxnreg) */
  VEC(int64_t) regops; /* the setmaxnreg counts it executed, in order */
} swave;

/* One byte of shared memory (a granule) with its race shadow. */
typedef struct sshared {
  uint8_t bits;
  uint32_t wepoch, rdepoch; /* epoch + 1 of the last write / read */
  int32_t writer, reader;   /* thread ids */
  uint16_t inflight;        /* asynchronous copies to it not yet retired */
  uint16_t wgread;          /* reads by wgmmas not yet retired */
  uint16_t tinflight;        /* tensor copies to it not yet landed */
  int16_t tbar;             /* mbarrier + 1 whose phase tphase the tensor */
  uint32_t tphase;          /* copy that wrote it completed on; 0: none  */
  uint32_t wfence;          /* proxy fences its writer's wave ran before */
  uint16_t bsread;          /* tensor stores reading it, not yet retired */
  bool multi;               /* read by several threads this epoch */
  bool init;
} sshared;

/* An asynchronous copy in flight: its 16 bytes, read from global memory
 * when it was issued, land in shared memory when a wait of its thread
 * retires its group. */
typedef struct scopy {
  const tir_instr *in;
  uint32_t wave, group;
  int lane;
  int64_t addr; /* first shared byte */
  uint8_t bits[16];
} scopy;

/* What a wgmma in flight holds until a wait retires its group: a register
 * (accumulator or lhs fragment) or a shared granule it reads. */
typedef struct spend {
  int64_t at; /* register, or shared byte */
  uint32_t group;
  bool smem;
} spend;

struct scluster;

/* One workgroup's state. A cluster (tir_prog.cluster > 1) runs one of
 * these for each of its workgroups side by side (struct scluster); they
 * share the launch's: the program, the arguments and their shadows
 * (ginit, gwriter), the step budget and the mma scratch. */
typedef struct sim {
  wavec_ctx *ctx;
  wv_kernel *k;
  const tir_prog *p;
  void *const *args;
  uint8_t **ginit;    /* per arg: element written (NULL: all are, inputs) */
  int32_t **gwriter;  /* per arg: thread + 1 of the last store this launch
                       * (NULL: an argument the kernel does not write) */
  /* per argument the kernel both writes and reads (else NULL): the
   * epoch + 1 of each element's last write, its last reader (thread + 1;
   * negative: several read it in that epoch) and that epoch + 1 */
  uint32_t **gwep, **grep;
  int32_t **greader;
  /* the same arguments: the instruction (+ 1) of each element's last
   * write and last read, for the race reports' "at line:col" */
  uint32_t **gwinst, **grinst;
  uint32_t nwaves;
  int lanes;
  val *regs;          /* [wave][reg][lane] */
  uint8_t *rset;      /* register written, same shape */
  swave *waves;
  sshared *smem;
  int64_t ngran; /* shared memory in 1-byte granules */
  VEC(scopy) copies;  /* in flight, in issue order */
  uint32_t *groups;   /* per wave: groups of copies closed so far */
  uint32_t epoch;
  int64_t wg[3];
  /* per mma role in registers: [lane*elems+e] -> its two coordinates */
  int (*mma_map[WV_ROLE_COUNT])[2];
  int map_n;            /* the N the maps are for (0: none yet) */
  VEC(spend) *wpend;    /* per wave: what its wgmmas in flight hold */
  uint32_t *wgroups;    /* per wave: groups of wgmmas closed so far */
  int mma_elems[WV_ROLE_COUNT];
  val *tmp;
  double *A, *B, *C; /* mma scratch */
  struct sim_async *as; /* mbarriers and tensor copies, or NULL (none) */
  uint64_t steps, max_steps; /* instructions run by any wave; the budget */
  int64_t reg_free; /* registers of the workgroup's pool no wave holds */
  /* per wave: proxy fences (T_FENCE, T_FENCEPX) run, and how many of them
   * ran before a barrier the wave passed (published) */
  uint32_t *pfences, *pfence_pub;
  /* turns (T_TURNWAIT, T_TURNPASS) by barrier id: threads passed and not
   * yet taken by a wait; the last pass */
  int64_t turn_passed[16];
  const tir_instr *turn_last[16];
  /* clusters: its cluster (NULL: none), its rank there, and the number of
   * its first wave in the clocks of sim_async.c, which cover every wave
   * of the cluster (nclk of them; nwaves without clusters) */
  struct scluster *cl;
  uint32_t rank, wbase, nclk;
  uint32_t cbar_ep; /* epoch + 1 of the last cluster barrier's release */
  bool ended;       /* every wave is done (and the end checks ran) */
} sim;

/* The workgroups of a cluster, run together: %ctaid.x of wg[r] is C c + r. */
typedef struct scluster {
  uint32_t n; /* workgroups (tir_prog.cluster) */
  sim *wg;
  /* tensor copies land only in a round that may (sim_async_wait): with
   * clusters, once no wave of the cluster could move otherwise, so that
   * every copy of a phase another workgroup issues has been issued */
  bool land;
} scluster;

#define R(s, w, r, l) ((s)->regs[((size_t)(w) * (s)->p->regs.n + (r)) * (s)->lanes + (l)])
#define RSET(s, w, r, l) ((s)->rset[((size_t)(w) * (s)->p->regs.n + (r)) * (s)->lanes + (l)])

/* RSET values: 0 unwritten, 1 written, 2 a wgmma in flight writes it. */
enum { REG_UNSET, REG_SET, REG_WGMMA };

static inline bool is_float(tir_ty ty) {
  return ty == TY_F16 || ty == TY_BF16 || ty == TY_F32 || ty == TY_E4M3 ||
         ty == TY_E5M2;
}

/* Fails with diagnostic id at the instruction's source line, naming the
 * thread (lane l of wave w) and the workgroup. */
_Noreturn void sim_report(sim *s, const tir_instr *in, uint32_t w, int l,
                          wv_diag_id id, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Register r of lane l of wave w, checked (written, not in flight). */
val sim_rd(sim *s, const tir_instr *in, uint32_t w, uint32_t r, int l);
/* Thread (w, l) stores x to element off of argument arg (in bounds),
 * checking that no other thread stored a different value there. */
void sim_store_elem(sim *s, const tir_instr *in, uint32_t w, int l,
                    int64_t arg, int64_t off, double x);
/* Adds x to f32 element off of argument arg as thread (w, l) (T_REDG, a
 * tensor store that adds): subnormals flushed, and a store of another
 * thread to the element reported. */
void sim_add_elem(sim *s, const tir_instr *in, uint32_t w, int l,
                  int64_t arg, int64_t off, double x);
/* Register r of lane l of wave w becomes v (written). */
void sim_wr(sim *s, uint32_t w, uint32_t r, int l, val v);
/* Register r of wave w, which tir.h has the same in every lane; where it
 * is not, an internal error saying `differs`. */
int64_t sim_uniform(sim *s, const tir_instr *in, uint32_t w, uint32_t r,
                    const char *differs);
/* Reads (st == NULL) or writes *st at shared byte address `addr` as type
 * ty, checking bounds, alignment, initialisation and races byte by byte. */
val sim_shared_access(sim *s, const tir_instr *in, uint32_t w, int l,
                      tir_ty ty, int64_t addr, const val *st);

/* ---- sim_mma.c: the tensor cores ------------------------------------------ */
/* The maps of an mma's register roles for tiles of N columns (kept until
 * another N is asked for). */
void sim_mma_maps(sim *s, wavec_mma_kind kind, int N);
/* T_MMA of wave w. */
void sim_mma(sim *s, const tir_instr *in, uint32_t w);
/* T_WGMMA of wave w: the accumulator is updated now, its registers and
 * the shared bytes it read stay in flight until a wait retires them. */
void sim_wgmma(sim *s, const tir_instr *in, uint32_t w);
/* Closes wave w's open group of wgmmas, if any (T_WGCOMMIT). */
void sim_wgmma_close(sim *s, uint32_t w);
/* T_WGWAIT: all but the `keep` newest groups of wave w retire. */
void sim_wgmma_wait(sim *s, uint32_t w, int64_t keep);

/* x as type ty holds it (f16, bf16, f32, fp8 rounding; others as is). */
double sim_round_to(tir_ty ty, double x);
/* Thread (w, l)'s global read, store and add of element `off` of argument
 * in->imm, bounds and writers checked (sim_mem.c). */
val sim_ldg(sim *s, const tir_instr *in, uint32_t w, int l, tir_ty ty,
            int64_t off);
void sim_stg(sim *s, const tir_instr *in, uint32_t w, int l, tir_ty ty,
             int64_t off, val v);
void sim_redg(sim *s, const tir_instr *in, uint32_t w, int l, int64_t off,
              double x);
/* A cp.async of 16 bytes from element `off` of argument in->imm to shared
 * byte `addr` (zeros when `zero`); wave w's wait, which lands its copies
 * of groups older than the `keep` newest closed ones (sim_mem.c). */
void sim_copy_issue(sim *s, const tir_instr *in, uint32_t w, int l,
                    int64_t addr, int64_t off, bool zero);
void sim_copy_wait(sim *s, uint32_t w, int64_t keep);
/* The bytes of v as type ty (tir_ty_bytes of them, low byte first), and
 * back. */
void sim_encode(tir_ty ty, val v, uint8_t bytes[4]);
val sim_decode(tir_ty ty, const uint8_t *bytes);

/* ---- sim_async.c: mbarriers and tensor copies (tir.h) ---------------------- */
/* The state for programs that use them (s->as stays NULL otherwise). */
/* Has the generic-proxy write of byte m been fenced for the async proxy
 * reads of thread `me` (sim_mem.c)? */
bool sim_proxy_fenced(const sim *s, const sshared *m, int32_t me);
void sim_async_new(sim *s);
/* A workgroup starts. */
void sim_async_reset(sim *s);
/* T_MBINIT, T_MBARRIVE, T_TMA, T_FENCE, and the tensor stores' T_TMAST,
 * T_BULKCOMMIT, T_BULKWAIT(R), T_FENCEPX of wave w (an arrival at every
 * workgroup's barrier and a multicast copy reach the other workgroups of
 * s->cl). */
void sim_async_exec(sim *s, const tir_instr *in, uint32_t w);
/* T_MBWAIT of wave w: false while its phase has not completed (the wave
 * blocks there and tries again later). Copies land only where s->cl is
 * NULL or s->cl->land. */
bool sim_async_wait(sim *s, const tir_instr *in, uint32_t w);
/* Lane l of wave w reads granule g (checks that a tensor copy's bytes
 * were waited for; records the read for the refill checks). */
void sim_async_read(sim *s, const tir_instr *in, uint32_t w, int l,
                    int64_t g);
/* A read of granule g by a wgmma of wave w retired. */
void sim_async_retired(sim *s, uint32_t w, int64_t g);
/* Lane l of wave w writes granule g with an ordinary store or copy. */
void sim_async_write(sim *s, const tir_instr *in, uint32_t w, int l,
                     int64_t g);
/* The waves `who` (by wave) passed a barrier together (with clusters,
 * their clocks tick after it). */
void sim_async_barrier(sim *s, const bool *who);
/* Every wave of the cluster passed a cluster barrier (after each
 * workgroup's sim_async_barrier of all its waves): their clocks join, and
 * tick. */
void sim_async_cluster_barrier(scluster *cl);
/* No wave can go on: reports the wait that never completes. */
_Noreturn void sim_async_deadlock(sim *s);
/* The workgroup ended: reports tensor copies and stores nothing waited
 * for (a copy another workgroup multicast into it included), and an
 * arrival of another workgroup of its cluster that no wait of its saw. */
void sim_async_end(sim *s);

#endif
