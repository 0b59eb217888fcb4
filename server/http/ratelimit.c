/* ratelimit.c -- see ratelimit.h. An open array scanned linearly: a few
 * thousand entries of ~80 bytes, touched only by POSTs that are themselves
 * rate-limited, so a hash table would buy nothing measurable. */
#define _GNU_SOURCE
#include "kernels/base/timeutil.h"
#include "server/http/ratelimit.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RL_KEY_LEN 64

struct bucket {
    char key[RL_KEY_LEN];
    double tokens;
    double last; /* monotonic seconds of the last refill */
};

struct ratelimit {
    pthread_mutex_t lock;
    unsigned per_min, max, n;
    struct bucket *b;
};

struct ratelimit *ratelimit_create(unsigned per_min, unsigned max_entries) {
    struct ratelimit *rl = calloc(1, sizeof *rl);
    if (!rl) return NULL;
    rl->per_min = per_min;
    rl->max = max_entries ? max_entries : 4096;
    rl->b = calloc(rl->max, sizeof *rl->b);
    if (!rl->b) {
        free(rl);
        return NULL;
    }
    pthread_mutex_init(&rl->lock, NULL);
    return rl;
}

void ratelimit_free(struct ratelimit *rl) {
    if (!rl) return;
    pthread_mutex_destroy(&rl->lock);
    free(rl->b);
    free(rl);
}

int ratelimit_take(struct ratelimit *rl, const char *key, unsigned *retry_after_s) {
    if (rl->per_min == 0) return 1;
    double now = (timeutil_now_ms() / 1e3), rate = rl->per_min / 60.0, cap = rl->per_min;
    pthread_mutex_lock(&rl->lock);
    struct bucket *b = NULL, *oldest = NULL;
    for (unsigned i = 0; i < rl->n; i++) {
        if (strncmp(rl->b[i].key, key, RL_KEY_LEN - 1) == 0) { b = &rl->b[i]; break; }
        if (!oldest || rl->b[i].last < oldest->last) oldest = &rl->b[i];
    }
    if (!b) {
        b = rl->n < rl->max ? &rl->b[rl->n++] : oldest;
        strncpy(b->key, key, RL_KEY_LEN - 1);
        b->key[RL_KEY_LEN - 1] = '\0';
        b->tokens = cap;
        b->last = now;
    }
    b->tokens += (now - b->last) * rate;
    if (b->tokens > cap) b->tokens = cap;
    b->last = now;
    int ok = b->tokens >= 1.0;
    if (ok) b->tokens -= 1.0;
    else if (retry_after_s) *retry_after_s = (unsigned)ceil((1.0 - b->tokens) / rate);
    pthread_mutex_unlock(&rl->lock);
    return ok;
}
