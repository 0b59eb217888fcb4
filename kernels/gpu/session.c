/* session.c -- what a worker keeps between jobs (session.h).
 *
 * Buffers only grow: a slot is reallocated when a job needs more than it
 * holds and kept at that size. Masks and chains live in small fixed tables;
 * when one is full the oldest chain, and the least recently used mask, is
 * replaced (a worker sees few distinct predicates, grids and iteration
 * counts). The masks make room by use, not by age: a table holds pointers to
 * its rows' masks until its checks end, and with at most DV_MAX_ROWS rows a
 * table and SESSION_MASKS twice that, the masks of the table being set up
 * are the most recently used and never the ones replaced (a table whose
 * rows partly hit masks made long ago would otherwise replace one of them
 * with the next row's). Device buffers belong to the
 * device they were made on: a job on another ordinal drops them all.
 *
 * The profiler is made on the first job that asks for counters and kept:
 * counters_prepare() does nothing when it is ready for the device and the
 * context, and rebuilds it otherwise (a new device, a failed pass). The
 * context is the runtime's current one, asked of the driver through the
 * runtime's entry-point query (the binary links no driver library).
 */
#include "kernels/gpu/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "kernels/gpu/counters.h"
#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/smclock.h"
#include "kernels/model/model/chain.h"
#include "kernels/model/model/reference.h"

#define SESSION_CHAINS 4
#define SESSION_MASKS 32

struct session_chain {
    unsigned iterations; /* 0: empty */
    float a[DV_INPUT_DISTINCT], b[DV_INPUT_DISTINCT];
};

struct session_mask_entry {
    int used;
    unsigned long long last_use; /* the session's mask_uses when last asked for */
    enum dv_kernel kernel;
    enum dv_mode mode;
    char name[PREDICATE_TEXT_LEN];
    struct dv_geometry g;
    uint32_t *host;
    uint32_t *device; /* NULL until a mask kernel asks */
};

struct session {
    int have_device, ordinal;
    struct dv_device device;
    float *d_in;
    unsigned long long in_n;
    float *d_out[DV_MAX_ROWS], *h_out[DV_MAX_ROWS];
    unsigned long long out_n[DV_MAX_ROWS];
    cudaEvent_t events[DV_MAX_ROWS];
    long long *d_spin;
    unsigned spin_n;
    double clock_mhz; /* 0: none yet */
    struct session_chain chains[SESSION_CHAINS];
    unsigned next_chain;
    struct session_mask_entry masks[SESSION_MASKS];
    unsigned long long mask_uses;
    session_progress_fn progress; /* NULL: no hook */
    void *progress_ctx;
    struct dv_witness_block *d_witness, *h_witness, *e_witness;
    unsigned witness_n;
    struct counters *counters; /* NULL until a job asks for counters */
};

struct session *session_create(void) {
    return calloc(1, sizeof(struct session));
}

static void mask_drop(struct session_mask_entry *m) {
    free(m->host);
    if (m->device) cudaFree(m->device);
    memset(m, 0, sizeof(*m));
}

/* Every device resource (the host tables stay: they are not per device). */
static void drop_device(struct session *s) {
    if (s->d_in) cudaFree(s->d_in);
    s->d_in = NULL;
    s->in_n = 0;
    for (unsigned i = 0; i < DV_MAX_ROWS; i++) {
        if (s->d_out[i]) cudaFree(s->d_out[i]);
        if (s->h_out[i]) cudaFreeHost(s->h_out[i]);
        if (s->events[i]) cudaEventDestroy(s->events[i]);
        s->d_out[i] = s->h_out[i] = NULL;
        s->events[i] = NULL;
        s->out_n[i] = 0;
    }
    if (s->d_spin) cudaFree(s->d_spin);
    s->d_spin = NULL;
    s->spin_n = 0;
    if (s->d_witness) cudaFree(s->d_witness);
    if (s->h_witness) cudaFreeHost(s->h_witness);
    free(s->e_witness);
    s->d_witness = s->h_witness = s->e_witness = NULL;
    s->witness_n = 0;
    for (unsigned i = 0; i < SESSION_MASKS; i++) {
        if (s->masks[i].device) cudaFree(s->masks[i].device);
        s->masks[i].device = NULL;
    }
    s->clock_mhz = 0;
}

void session_free(struct session *s) {
    if (!s) return;
    counters_free(s->counters);
    drop_device(s);
    for (unsigned i = 0; i < SESSION_MASKS; i++) mask_drop(&s->masks[i]);
    free(s);
}

int session_device(struct session *s, int ordinal, struct dv_device *d, char *err) {
    if (s->have_device && s->ordinal == ordinal) {
        *d = s->device;
        return 0;
    }
    if (s->have_device) drop_device(s);
    s->have_device = 0;
    int rc = device_query(ordinal, d, err);
    if (rc != 0) return rc;
    s->device = *d;
    s->ordinal = ordinal;
    s->have_device = 1;
    return 0;
}

const float *session_input(struct session *s, unsigned long long n, int *rc, char *err) {
    if (n <= s->in_n) return s->d_in;
    float *h = malloc(sizeof(float) * n);
    float *d = NULL;
    if (!h) {
        dv_seterr(err, "out of memory for %llu inputs", n);
        *rc = DV_ERR;
        return NULL;
    }
    reference_input(h, n);
    if ((*rc = DV_CUDA_CALL(cudaMalloc((void **)&d, sizeof(float) * n), err)) != 0 ||
        (*rc = DV_CUDA_CALL(cudaMemcpy(d, h, sizeof(float) * n, cudaMemcpyHostToDevice), err)) != 0) {
        if (d) cudaFree(d);
        free(h);
        return NULL;
    }
    free(h);
    if (s->d_in) cudaFree(s->d_in);
    s->d_in = d;
    s->in_n = n;
    return d;
}

float *session_output(struct session *s, unsigned slot, unsigned long long n, float **host, int *rc, char *err) {
    if (slot >= DV_MAX_ROWS) {
        dv_seterr(err, "session: row slot %u out of range", slot);
        *rc = DV_ERR;
        return NULL;
    }
    if (n > s->out_n[slot]) {
        if (s->d_out[slot]) cudaFree(s->d_out[slot]);
        if (s->h_out[slot]) cudaFreeHost(s->h_out[slot]);
        s->d_out[slot] = s->h_out[slot] = NULL;
        s->out_n[slot] = 0;
        if ((*rc = DV_CUDA_CALL(cudaMalloc((void **)&s->d_out[slot], sizeof(float) * n), err)) != 0 ||
            (*rc = DV_CUDA_CALL(cudaMallocHost((void **)&s->h_out[slot], sizeof(float) * n), err)) != 0) {
            if (s->d_out[slot]) cudaFree(s->d_out[slot]);
            s->d_out[slot] = s->h_out[slot] = NULL;
            return NULL;
        }
        s->out_n[slot] = n;
    }
    if ((*rc = DV_CUDA_CALL(cudaMemsetAsync(s->d_out[slot], 0xff, sizeof(float) * n, 0), err)) != 0) return NULL;
    *host = s->h_out[slot];
    return s->d_out[slot];
}

unsigned long long session_output_room(const struct session *s, unsigned slot) {
    return slot < DV_MAX_ROWS ? s->out_n[slot] : 0;
}

int session_chains(struct session *s, unsigned iterations, const float **a, const float **b, char *err) {
    for (unsigned i = 0; i < SESSION_CHAINS; i++) {
        if (s->chains[i].iterations == iterations && iterations != 0) {
            *a = s->chains[i].a;
            *b = s->chains[i].b;
            return 0;
        }
    }
    struct session_chain *c = &s->chains[s->next_chain];
    c->iterations = 0;
    if (reference_chains(iterations, c->a, c->b, err) != 0) return -1;
    c->iterations = iterations;
    s->next_chain = (s->next_chain + 1) % SESSION_CHAINS;
    *a = c->a;
    *b = c->b;
    return 0;
}

static int mask_matches(const struct session_mask_entry *m, const struct dv_row *row, const struct dv_geometry *g) {
    struct dv_row kept;
    if (!m->used) return 0;
    kept.kernel = m->kernel;
    kept.mode = m->mode;
    memcpy(kept.name, m->name, sizeof(kept.name));
    return m->g.blocks == g->blocks && m->g.block_x == g->block_x && m->g.block_y == g->block_y &&
           experiment_row_same_run(&kept, row);
}

/* The entry to replace: an empty one, else the least recently used. */
static struct session_mask_entry *mask_victim(struct session *s) {
    struct session_mask_entry *v = &s->masks[0];
    for (unsigned i = 0; i < SESSION_MASKS; i++) {
        if (!s->masks[i].used) return &s->masks[i];
        if (s->masks[i].last_use < v->last_use) v = &s->masks[i];
    }
    return v;
}

const uint32_t *session_mask(struct session *s, const struct dv_row *row, const struct dv_geometry *g,
                             session_mask_fn build, const uint32_t **device, int *rc, char *err) {
    struct session_mask_entry *m = NULL;
    for (unsigned i = 0; i < SESSION_MASKS && !m; i++)
        if (mask_matches(&s->masks[i], row, g)) m = &s->masks[i];
    if (!m) {
        uint32_t *h = build(row, g, err);
        if (!h) {
            *rc = DV_ERR;
            return NULL;
        }
        m = mask_victim(s);
        mask_drop(m);
        m->used = 1;
        m->kernel = row->kernel;
        m->mode = row->mode;
        snprintf(m->name, sizeof(m->name), "%s", row->name);
        m->g = *g;
        m->host = h;
    }
    m->last_use = ++s->mask_uses;
    if (device && !m->device) {
        const size_t bytes = sizeof(uint32_t) * analysis_mask_words(g);
        if ((*rc = DV_CUDA_CALL(cudaMalloc((void **)&m->device, bytes), err)) != 0) {
            m->device = NULL;
            return NULL;
        }
        if ((*rc = DV_CUDA_CALL(cudaMemcpy(m->device, m->host, bytes, cudaMemcpyHostToDevice), err)) != 0) {
            cudaFree(m->device);
            m->device = NULL;
            return NULL;
        }
    }
    if (device) *device = m->device;
    return m->host;
}

int session_clock_hint(struct session *s, double *mhz, char *err) {
    if (s->clock_mhz <= 0) {
        int rc = smclock_measure(&s->clock_mhz, err);
        if (rc != 0) {
            s->clock_mhz = 0;
            return rc;
        }
    }
    *mhz = s->clock_mhz;
    return 0;
}

void session_clock_note(struct session *s, double mhz) {
    if (mhz > 0) s->clock_mhz = mhz;
}

long long *session_spin_buffer(struct session *s, unsigned sms, int *rc, char *err) {
    if (sms > s->spin_n) {
        if (s->d_spin) cudaFree(s->d_spin);
        s->d_spin = NULL;
        s->spin_n = 0;
        if ((*rc = DV_CUDA_CALL(cudaMalloc((void **)&s->d_spin, sizeof(long long) * sms), err)) != 0) {
            s->d_spin = NULL;
            return NULL;
        }
        s->spin_n = sms;
    }
    return s->d_spin;
}

void session_set_progress(struct session *s, session_progress_fn fn, void *ctx) {
    s->progress = fn;
    s->progress_ctx = ctx;
}

void session_progress(const struct session *s, unsigned table, unsigned ntables, const struct dv_table *t, int done) {
    if (s->progress) s->progress(s->progress_ctx, table, ntables, t, done);
}

cudaEvent_t session_event(struct session *s, unsigned slot, int *rc, char *err) {
    if (slot >= DV_MAX_ROWS) {
        dv_seterr(err, "session: event slot %u out of range", slot);
        *rc = DV_ERR;
        return NULL;
    }
    if (!s->events[slot] &&
        (*rc = DV_CUDA_CALL(cudaEventCreateWithFlags(&s->events[slot], cudaEventDisableTiming), err)) != 0) {
        s->events[slot] = NULL;
        return NULL;
    }
    return s->events[slot];
}

int session_witness(struct session *s, unsigned records, struct dv_witness_block **dev, struct dv_witness_block **seen,
                    struct dv_witness_block **expected, char *err) {
    if (records > s->witness_n) {
        if (s->d_witness) cudaFree(s->d_witness);
        if (s->h_witness) cudaFreeHost(s->h_witness);
        free(s->e_witness);
        s->d_witness = s->h_witness = s->e_witness = NULL;
        s->witness_n = 0;
        const size_t bytes = sizeof(struct dv_witness_block) * records;
        int rc;
        if ((rc = DV_CUDA_CALL(cudaMalloc((void **)&s->d_witness, bytes), err)) != 0 ||
            (rc = DV_CUDA_CALL(cudaMallocHost((void **)&s->h_witness, bytes), err)) != 0) {
            if (s->d_witness) cudaFree(s->d_witness);
            s->d_witness = s->h_witness = NULL;
            return rc;
        }
        if (!(s->e_witness = malloc(bytes))) {
            dv_seterr(err, "witness: out of memory for %u block records", records);
            cudaFree(s->d_witness);
            cudaFreeHost(s->h_witness);
            s->d_witness = s->h_witness = NULL;
            return DV_ERR;
        }
        s->witness_n = records;
    }
    *dev = s->d_witness;
    *seen = s->h_witness;
    *expected = s->e_witness;
    return 0;
}

/* The current CUcontext, from the driver's cuCtxGetCurrent. */
static int current_context(void **ctx, char *reason) {
    CUresult (*get)(CUcontext *) = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (DV_CUDA_CALL(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&get, 12000, cudaEnableDefault, &q),
                     reason) != 0)
        return -1;
    CUcontext c = NULL;
    /* The runtime makes its context current on first use; make sure it has. */
    if (DV_CUDA_CALL(cudaFree(0), reason) != 0) return -1;
    if (q != cudaDriverEntryPointSuccess || !get || get(&c) != CUDA_SUCCESS || !c) {
        dv_seterr(reason, "CUPTI: no current CUDA context (cuCtxGetCurrent: entry point %d)", (int)q);
        return -1;
    }
    *ctx = c;
    return 0;
}

struct counters *session_counters(struct session *s, const struct dv_device *d, char *library, char *reason) {
    library[0] = '\0';
    if (!s->counters && !(s->counters = counters_create())) {
        dv_seterr(reason, "counters: out of memory");
        return NULL;
    }
    void *ctx = NULL;
    /* After a sticky error no CUDA call may follow, not even for the context. */
    if (!counters_lost(s->counters) && current_context(&ctx, reason) != 0) return NULL;
    return counters_prepare(s->counters, d->ordinal, d->cc_major, ctx, library, reason) == 0 ? s->counters : NULL;
}

int session_lost(const struct session *s) { return counters_lost(s->counters); }

void session_release_profiler(void *s) {
    if (s) counters_release(((struct session *)s)->counters);
}
