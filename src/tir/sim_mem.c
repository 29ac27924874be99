/* The simulator's memories (sim.c runs the instructions): global tensors
 * (bounds, reads of what nothing wrote, stores and adds of different
 * threads to one element: gwriter), the bytes of values as each type holds
 * them, shared memory with its race shadow (a granule's last writer and
 * readers and their epochs), and cp.async copies, which claim their
 * shared bytes at issue and land when a wait retires their group. */
#include <math.h>
#include <stdio.h>

#include "support/half.h"
#include "tir/sim.h"

double sim_round_to(tir_ty ty, double x) {
  switch (ty) {
  case TY_F16: return wv_round_f16(x);
  case TY_BF16: return wv_round_bf16(x);
  case TY_F32: return (double)(float)x;
  case TY_E4M3: return wv_e4m3_to_f64(wv_f64_to_e4m3(x));
  case TY_E5M2: return wv_e5m2_to_f64(wv_f64_to_e5m2(x));
  default: return x;
  }
}

static void store_elem(wavec_dtype dt, void *base, int64_t i, double v) {
  switch (dt) {
  case WAVEC_F16: ((uint16_t *)base)[i] = wv_f64_to_f16(v); break;
  case WAVEC_BF16: ((uint16_t *)base)[i] = wv_f64_to_bf16(v); break;
  case WAVEC_F32: ((float *)base)[i] = (float)v; break;
  case WAVEC_I32: ((int32_t *)base)[i] = (int32_t)v; break;
  case WAVEC_F8E4M3: ((uint8_t *)base)[i] = wv_f64_to_e4m3(v); break;
  case WAVEC_F8E5M2: ((uint8_t *)base)[i] = wv_f64_to_e5m2(v); break;
  case WAVEC_I8: ((int8_t *)base)[i] = (int8_t)v; break;
  default: ((uint8_t *)base)[i] = v != 0; break;
  }
}

static int32_t global_thread(sim *s, uint32_t w, int l) {
  const tir_prog *p = s->p;
  return (int32_t)((((s->wg[2] * p->grid[1] + s->wg[1]) * p->grid[0] +
                     s->wg[0]) *
                        (p->block[0] * p->block[1] * p->block[2]) +
                    (int64_t)w * s->lanes + l) +
                   1);
}

/* Checks that element `off` of argument in->imm exists; `what` the
 * access ("read of", "write of", "add to"). */
static void global_bounds(sim *s, const tir_instr *in, uint32_t w, int l,
                          int64_t off, const char *what) {
  const tir_arg *a = &s->p->args.v[in->imm];
  if (off < 0 || off >= a->elems)
    sim_report(s, in, w, l, D_SIM_OOB,
               "out-of-bounds %s '%s': element %lld of %lld", what, a->name,
               (long long)off, (long long)a->elems);
}

static void global_read(sim *s, const tir_instr *in, uint32_t w, int l,
                        int64_t arg, int64_t off);

val sim_ldg(sim *s, const tir_instr *in, uint32_t w, int l, tir_ty ty,
            int64_t off) {
  const tir_arg *a = &s->p->args.v[in->imm];
  global_bounds(s, in, w, l, off, "read of");
  if (s->ginit[in->imm] && !s->ginit[in->imm][off])
    sim_report(s, in, w, l, D_SIM_UNINIT,
           "read of '%s' element %lld, which nothing wrote", a->name,
           (long long)off);
  if (off >= 0 && off < a->elems)
    global_read(s, in, w, l, in->imm, off);
  double x = wv_elem_load((int)a->dt, s->args[in->imm], off);
  val r;
  if (is_float(ty))
    r.f = x;
  else
    r.i = (int64_t)x;
  return r;
}

/* Global memory's order (gwep, greader, grep): the threads of a
 * workgroup are ordered by its barriers (an epoch each), so an element
 * one thread wrote and another reads, or one read and another writes,
 * needs a barrier between; workgroups are ordered by nothing, so there
 * it is a race whatever lies between. Threads are numbered across the
 * launch (global_thread), a workgroup's consecutively. */
static bool same_workgroup(const sim *s, int32_t a, int32_t b) {
  int64_t t = s->p->block[0] * s->p->block[1] * s->p->block[2];
  return (a - 1) / t == (b - 1) / t;
}

/* "thread T of workgroup (x, y, z)" for thread number a (+ 1). */
static const char *thread_name(sim *s, int32_t a, char buf[96]) {
  const tir_prog *p = s->p;
  int64_t t = p->block[0] * p->block[1] * p->block[2];
  int64_t g = (a - 1) / t;
  snprintf(buf, 96, "thread %lld of workgroup (%lld, %lld, %lld)",
           (long long)((a - 1) % t), (long long)(g % p->grid[0]),
           (long long)(g / p->grid[0] % p->grid[1]),
           (long long)(g / p->grid[0] / p->grid[1]));
  return buf;
}

/* Element `off` of argument `arg`, last written (`did` "wrote") or read
 * ("read") by thread `prev` (+ 1, negative where it added or where
 * several read it), is read or written (`what`) by thread me: the race,
 * if it is one. */
static void global_order(sim *s, const tir_instr *in, uint32_t w, int l,
                         int64_t arg, int64_t off, int32_t prev, int32_t me,
                         const char *what, const char *did) {
  int32_t who = prev < 0 ? -prev : prev;
  bool wrote = did[0] == 'w';
  uint32_t ep = wrote ? s->gwep[arg][off] : s->grep[arg][off];
  if (!who || (who == me && (wrote || prev > 0)))
    return;
  const char *name = s->p->args.v[arg].name;
  /* where the other access is in the source */
  uint32_t ix = (wrote ? s->gwinst[arg] : s->grinst[arg])[off];
  char b[96], at[48] = "";
  if (ix && s->p->code.v[ix - 1].loc.line)
    snprintf(at, sizeof at, " (at %u:%u)", s->p->code.v[ix - 1].loc.line,
             s->p->code.v[ix - 1].loc.col);
  if (!same_workgroup(s, who, me))
    sim_report(s, in, w, l, D_SIM_GRACE,
               "global-memory race: a %s of '%s' element %lld, which %s "
               "%s%s: workgroups run in no order, so a kernel reads back, or "
               "writes again, only what its own workgroup touches",
               what, name, (long long)off, thread_name(s, who, b), did, at);
  if (ep != s->epoch + 1)
    return; /* a barrier between */
  int64_t t = s->p->block[0] * s->p->block[1] * s->p->block[2];
  if (!wrote && prev < 0)
    sim_report(s, in, w, l, D_SIM_GRACE,
               "global-memory race: a %s of '%s' element %lld after other "
               "threads of the workgroup read it%s, with no barrier between",
               what, name, (long long)off, at);
  sim_report(s, in, w, l, D_SIM_GRACE,
             "global-memory race: a %s of '%s' element %lld after thread "
             "%lld %s it%s, with no barrier between",
             what, name, (long long)off, (long long)((who - 1) % t), did, at);
}

/* A read of element `off` of a written argument by thread (w, l). */
static void global_read(sim *s, const tir_instr *in, uint32_t w, int l,
                        int64_t arg, int64_t off) {
  if (!s->greader[arg])
    return;
  int32_t me = global_thread(s, w, l);
  uint32_t ep = s->epoch + 1;
  global_order(s, in, w, l, arg, off, s->gwriter[arg][off], me, "read",
               "wrote");
  int32_t r = s->greader[arg][off];
  bool several = s->grep[arg][off] == ep && r && (r < 0 || r != me) &&
                 same_workgroup(s, r < 0 ? -r : r, me);
  s->greader[arg][off] = several ? -me : me;
  s->grep[arg][off] = ep;
  s->grinst[arg][off] = (uint32_t)(in - s->p->code.v) + 1;
}

/* Before a write of element `off` by thread me: the reads it follows. */
static void global_write(sim *s, const tir_instr *in, uint32_t w, int l,
                         int64_t arg, int64_t off, int32_t me) {
  if (s->greader[arg])
    global_order(s, in, w, l, arg, off, s->greader[arg][off], me, "write",
                 "read");
}

/* Was element `off`, last written by thread prev (+ 1, negative: added),
 * written in an earlier epoch of me's workgroup (a barrier between)? */
static bool ordered_after(const sim *s, int64_t arg, int64_t off,
                          int32_t prev, int32_t me) {
  int32_t who = prev < 0 ? -prev : prev;
  return who && same_workgroup(s, who, me) &&
         s->gwep[arg][off] != s->epoch + 1;
}

/* Who last wrote each element of a written argument (gwriter): thread id
 * + 1 where it stored, -(id + 1) where it added (T_REDG); 0 none. Adds of
 * different threads commute; a store and another thread's add do not,
 * unless a barrier of their workgroup lies between. */
static void mixed_writes(sim *s, const tir_instr *in, uint32_t w, int l,
                         int64_t arg, int64_t off, int32_t prev, int32_t me,
                         bool adding) {
  if (!prev || prev == me || prev == -me || (prev < 0) == adding ||
      ordered_after(s, arg, off, prev, me))
    return;
  int32_t other = prev < 0 ? -prev : prev;
  char b[96];
  sim_report(s, in, w, l, D_SIM_CONFLICT,
             "%s '%s' element %lld, which %s %s: the result depends on "
             "their order",
             adding ? "an add to" : "a store to", s->p->args.v[arg].name,
             (long long)off, thread_name(s, other, b),
             adding ? "stored" : "added to");
}

/* Flushes a subnormal f32 to a zero of its sign (red.global.add.f32). */
static double ftz32(double x) {
  return fabs(x) < 0x1p-126 ? copysign(0.0, x) : x;
}

void sim_add_elem(sim *s, const tir_instr *in, uint32_t w, int l,
                  int64_t arg, int64_t off, double x) {
  const tir_arg *a = &s->p->args.v[arg];
  int32_t me = global_thread(s, w, l);
  global_write(s, in, w, l, arg, off, me);
  mixed_writes(s, in, w, l, arg, off, s->gwriter[arg][off], me, true);
  double old = wv_elem_load((int)a->dt, s->args[arg], off);
  double sum = (double)(float)(ftz32(old) + ftz32(x));
  store_elem(a->dt, s->args[arg], off, ftz32(sum));
  s->gwriter[arg][off] = -me;
  s->gwep[arg][off] = s->epoch + 1;
  if (s->gwinst[arg])
    s->gwinst[arg][off] = (uint32_t)(in - s->p->code.v) + 1;
}

void sim_redg(sim *s, const tir_instr *in, uint32_t w, int l, int64_t off,
              double x) {
  global_bounds(s, in, w, l, off, "add to");
  sim_add_elem(s, in, w, l, in->imm, off, x);
}

void sim_store_elem(sim *s, const tir_instr *in, uint32_t w, int l,
                    int64_t arg, int64_t off, double x) {
  const tir_arg *a = &s->p->args.v[arg];
  int32_t me = global_thread(s, w, l);
  int32_t prev = s->gwriter[arg][off];
  global_write(s, in, w, l, arg, off, me);
  mixed_writes(s, in, w, l, arg, off, prev, me, false);
  double was = wv_elem_load((int)a->dt, s->args[arg], off),
         now = sim_round_to(tir_ty_of(a->dt), x);
  /* (two NaNs are the same value: copies of a row's NaN statistic; a
   * store a barrier orders after the other is program order) */
  char b[96];
  if (prev > 0 && prev != me && was != now && !(isnan(was) && isnan(now)) &&
      !ordered_after(s, arg, off, prev, me))
    sim_report(s, in, w, l, D_SIM_CONFLICT,
               "a store to '%s' element %lld of another value than %s "
               "stored, with no barrier of one workgroup between",
               a->name, (long long)off, thread_name(s, prev, b));
  store_elem(a->dt, s->args[arg], off, x);
  if (s->ginit[arg])
    s->ginit[arg][off] = 1;
  s->gwriter[arg][off] = me;
  s->gwep[arg][off] = s->epoch + 1;
  if (s->gwinst[arg])
    s->gwinst[arg][off] = (uint32_t)(in - s->p->code.v) + 1;
}

void sim_stg(sim *s, const tir_instr *in, uint32_t w, int l, tir_ty ty,
             int64_t off, val v) {
  global_bounds(s, in, w, l, off, "write of");
  sim_store_elem(s, in, w, l, in->imm, off, is_float(ty) ? v.f : (double)v.i);
}

/* The bytes of v as type ty, low byte first. */
void sim_encode(tir_ty ty, val v, uint8_t bytes[4]) {
  uint32_t u;
  float f;
  switch (ty) {
  case TY_F16: u = wv_f64_to_f16(v.f); break;
  case TY_BF16: u = wv_f64_to_bf16(v.f); break;
  case TY_E4M3: u = wv_f64_to_e4m3(v.f); break;
  case TY_E5M2: u = wv_f64_to_e5m2(v.f); break;
  case TY_F32:
    f = (float)v.f;
    memcpy(&u, &f, 4);
    break;
  case TY_PRED: u = v.i != 0; break;
  default: u = (uint32_t)v.i; break; /* i32, i8 (its low byte) */
  }
  for (int b = 0; b < 4; b++)
    bytes[b] = (uint8_t)(u >> 8 * b);
}

val sim_decode(tir_ty ty, const uint8_t *bytes) {
  uint32_t u = 0;
  for (int b = 0; b < tir_ty_bytes(ty); b++)
    u |= (uint32_t)bytes[b] << 8 * b;
  val r = {0};
  float f;
  switch (ty) {
  case TY_F16: r.f = wv_f16_to_f32((uint16_t)u); break;
  case TY_BF16: r.f = wv_bf16_to_f32((uint16_t)u); break;
  case TY_E4M3: r.f = wv_e4m3_to_f64((uint8_t)u); break;
  case TY_E5M2: r.f = wv_e5m2_to_f64((uint8_t)u); break;
  case TY_F32:
    memcpy(&f, &u, 4);
    r.f = f;
    break;
  case TY_I8: r.i = (int8_t)u; break;
  case TY_PRED: r.i = u != 0; break;
  default: r.i = (int32_t)u; break;
  }
  return r;
}

/* Checks that `size` bytes at shared byte `addr` lie in shared memory,
 * aligned to `align`. */
static void shared_bounds(sim *s, const tir_instr *in, uint32_t w, int l,
                          int64_t addr, int64_t size, int64_t align,
                          bool write) {
  if (addr < 0 || addr + size > s->ngran)
    sim_report(s, in, w, l, D_SIM_OOB,
           "out-of-bounds %s shared memory: byte %lld of %lld",
           write ? "write to" : "read of", (long long)addr,
           (long long)s->ngran);
  if (addr % align)
    sim_report(s, in, w, l, D_SIM_OOB, "misaligned %lld-byte shared access at "
           "byte %lld", (long long)align, (long long)addr);
}

/* May the async proxy (a tensor store, a wgmma) of thread `me` read byte
 * m, which a thread wrote through the generic proxy: did the writer's
 * wave run a proxy fence after the write, and pass a barrier after that
 * fence (or is the reader the writer, after its fence)? */
bool sim_proxy_fenced(const sim *s, const sshared *m, int32_t me) {
  uint32_t x = (uint32_t)m->writer / (uint32_t)s->lanes;
  return m->writer == me ? s->pfences[x] > m->wfence
                         : s->pfence_pub[x] > m->wfence;
}

/* Byte m now holds `bits`, written by thread `me` in this epoch. */
static void granule_set(sim *s, sshared *m, uint8_t bits, int32_t me) {
  m->bits = bits;
  m->init = true;
  m->wepoch = s->epoch + 1;
  m->writer = me;
  m->wfence = s->pfences[me / s->lanes];
}

/* The race checks of a write of `bits` to byte m by thread me. */
static void check_write(sim *s, const tir_instr *in, uint32_t w, int l,
                        sshared *m, long long byte, uint8_t bits) {
  int32_t me = (int32_t)((int64_t)w * s->lanes + l);
  uint32_t ep = s->epoch + 1;
  bool same = m->init && m->bits == bits;
  if (s->as)
    sim_async_write(s, in, w, l, byte);
  if (m->inflight)
    sim_report(s, in, w, l, D_SIM_RACE,
           "shared-memory race: byte %lld written while an asynchronous copy "
           "to it is in flight (no wait retired it)",
           byte);
  if (m->wgread)
    sim_report(s, in, w, l, D_SIM_ASYNC,
           "shared byte %lld written while a wgmma that reads it is in flight "
           "(no wait retired it)",
           byte);
  if (m->wepoch == ep && m->writer != me && !same)
    sim_report(s, in, w, l, D_SIM_RACE,
           "shared-memory race: byte %lld written by threads %d and %d "
           "with no barrier between",
           byte, m->writer, me);
  if (m->rdepoch == ep && (m->reader != me || m->multi))
    sim_report(s, in, w, l, D_SIM_RACE,
           "shared-memory race: byte %lld written after thread %d read "
           "it, with no barrier between",
           byte, m->reader);
}

/* Reads (st == NULL) or writes *st at shared byte address `addr` as type
 * ty, checking bounds, alignment, initialisation and races byte by byte.
 * Values are kept as their bit patterns. */
val sim_shared_access(sim *s, const tir_instr *in, uint32_t w, int l,
                      tir_ty ty, int64_t addr, const val *st) {
  int64_t size = tir_ty_bytes(ty);
  shared_bounds(s, in, w, l, addr, size, size, st != NULL);
  uint8_t bits[4] = {0, 0, 0, 0};
  if (st)
    sim_encode(ty, *st, bits);
  int32_t me = (int32_t)((int64_t)w * s->lanes + l);
  uint32_t ep = s->epoch + 1;
  s->waves[w].smem_touched = true;
  for (int64_t g = 0; g < size; g++) {
    sshared *m = &s->smem[addr + g];
    long long byte = (long long)(addr + g);
    if (st) {
      check_write(s, in, w, l, m, byte, bits[g]);
      granule_set(s, m, bits[g], me);
      continue;
    }
    if (m->inflight)
      sim_report(s, in, w, l, D_SIM_RACE,
             "shared-memory race: byte %lld read while an asynchronous copy "
             "to it is in flight (no wait retired it)",
             byte);
    if (s->as)
      sim_async_read(s, in, w, l, addr + g);
    if (!m->init)
      sim_report(s, in, w, l, D_SIM_UNINIT,
             "read of shared-memory byte %lld, which nothing wrote", byte);
    if (m->wepoch == ep && m->writer != me)
      sim_report(s, in, w, l, D_SIM_RACE,
             "shared-memory race: byte %lld read after thread %d wrote it, "
             "with no barrier between",
             byte, m->writer);
    if (m->rdepoch == ep && m->reader != me)
      m->multi = true;
    else if (m->rdepoch != ep)
      m->multi = false;
    m->rdepoch = ep;
    m->reader = me;
    bits[g] = m->bits;
  }
  if (st)
    return (val){0};
  return sim_decode(ty, bits);
}

/* Issues thread (w, l)'s asynchronous copy of in->imm2 bytes (16, 8 or 4)
 * from element `off` of argument in->imm to shared byte `addr` (zeros,
 * reading nothing, when `zero`): the global read happens now, the bytes are
 * claimed (as written, for the race checks) and land when a wait retires
 * the copy. */
void sim_copy_issue(sim *s, const tir_instr *in, uint32_t w, int l,
                    int64_t addr, int64_t off, bool zero) {
  int64_t size = tir_ty_bytes(in->ty), vb = in->imm2, n = vb / size;
  shared_bounds(s, in, w, l, addr, vb, vb, true);
  if (!zero && off * size % vb)
    sim_report(s, in, w, l, D_SIM_OOB,
           "misaligned %lld-byte asynchronous copy from element %lld",
           (long long)vb, (long long)off);
  scopy c = {.in = in, .wave = w, .lane = l, .group = s->groups[w],
             .addr = addr};
  for (int64_t j = 0; j < n && !zero; j++) {
    uint8_t b[4];
    sim_encode(in->ty, sim_ldg(s, in, w, l, in->ty, off + j), b);
    for (int64_t h = 0; h < size; h++)
      c.bits[j * size + h] = b[h];
  }
  int32_t me = (int32_t)((int64_t)w * s->lanes + l);
  s->waves[w].smem_touched = true;
  for (int64_t g = 0; g < vb; g++) {
    sshared *m = &s->smem[addr + g];
    check_write(s, in, w, l, m, (long long)(addr + g), c.bits[g]);
    m->inflight++;
    m->wepoch = s->epoch + 1;
    m->writer = me;
  }
  vec_push(s->ctx, &s->copies, c);
}

/* Wave w's wait: its copies in groups older than the `keep` most recently
 * closed ones land. */
void sim_copy_wait(sim *s, uint32_t w, int64_t keep) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < s->copies.n; i++) {
    scopy *c = &s->copies.v[i];
    if (c->wave != w || (int64_t)c->group + keep >= (int64_t)s->groups[w]) {
      s->copies.v[kept++] = *c;
      continue;
    }
    for (int64_t g = 0; g < c->in->imm2; g++) {
      sshared *m = &s->smem[c->addr + g];
      m->inflight--;
      granule_set(s, m, c->bits[g], (int32_t)((int64_t)w * s->lanes + c->lane));
    }
  }
  s->copies.n = kept;
}
