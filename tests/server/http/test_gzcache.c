/* test_gzcache.c -- the kept gzip forms (gzcache.h): a form is what gunzip
 * turns back into the bytes, made once per key however many ask, at once
 * or one after another; what compression cannot shrink is remembered. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "server/http/gzcache.h"

/* A JSON-like text of `n` bytes, compressible as documents are. */
static char *text(size_t n) {
    char *t = malloc(n + 1);
    for (size_t i = 0; i < n; i++) t[i] = "{\"ratio\": 1.99, \"lanes\": [16, 16]}\n"[i % 36];
    t[n] = '\0';
    return t;
}

/* gunzip of f into a new buffer of *len bytes. */
static char *gunzip(const struct gzform *f, size_t cap, size_t *len) {
    char *out = malloc(cap);
    z_stream z = {0};
    cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)f->data;
    z.avail_in = (uInt)f->len;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    *len = z.total_out;
    inflateEnd(&z);
    return out;
}

Test(gzcache, the_form_gunzips_to_the_bytes) {
    struct gzcache *c = gzcache_create(8, 1 << 20);
    char *t = text(100000);
    struct gzform *f = gzcache_get(c, "k", t, 100000, NULL, NULL);
    cr_assert_not_null(f);
    cr_expect_lt(f->len, 100000 / 10);
    cr_expect_eq((unsigned char)f->data[0], 0x1f, "a gzip member (RFC 1952), not zlib's");
    cr_expect_eq((unsigned char)f->data[1], 0x8b);
    size_t n;
    char *back = gunzip(f, 200000, &n);
    cr_expect_eq(n, 100000);
    cr_expect_eq(memcmp(back, t, n), 0);
    free(back);
    gzform_release(f);
    free(t);
    gzcache_free(c);
}

Test(gzcache, one_compression_per_key_however_often_asked) {
    struct gzcache *c = gzcache_create(8, 1 << 20);
    char *t = text(50000);
    for (int i = 0; i < 100; i++) gzform_release(gzcache_get(c, "doc", t, 50000, NULL, NULL));
    gzform_release(gzcache_get(c, "other", t, 50000, NULL, NULL));
    struct gzcache_stats st;
    gzcache_stats(c, &st);
    cr_expect_eq(st.compressions, 2, "two keys, two compressions, not %llu", st.compressions);
    cr_expect_eq(st.hits, 99);
    free(t);
    gzcache_free(c);
}

static int reads;
static char *read_text(void *ctx, size_t *len) {
    reads++;
    *len = *(size_t *)ctx;
    return text(*len);
}

Test(gzcache, a_file_is_read_only_on_the_miss) {
    struct gzcache *c = gzcache_create(8, 1 << 20);
    size_t n = 20000;
    for (int i = 0; i < 10; i++) {
        struct gzform *f = gzcache_get(c, "file", NULL, n, read_text, &n);
        cr_assert_not_null(f);
        gzform_release(f);
    }
    cr_expect_eq(reads, 1);
    gzcache_free(c);
}

Test(gzcache, what_does_not_shrink_is_identity_and_not_tried_again) {
    struct gzcache *c = gzcache_create(8, 1 << 20);
    unsigned char noise[4096];
    unsigned x = 12345;
    for (size_t i = 0; i < sizeof noise; i++) noise[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
    for (int i = 0; i < 5; i++) cr_expect_null(gzcache_get(c, "noise", (char *)noise, sizeof noise, NULL, NULL));
    struct gzcache_stats st;
    gzcache_stats(c, &st);
    cr_expect_eq(st.compressions, 1);
    gzcache_free(c);
}

Test(gzcache, eviction_never_frees_a_form_being_sent) {
    struct gzcache *c = gzcache_create(1, 1 << 20);
    char *t = text(30000);
    struct gzform *a = gzcache_get(c, "a", t, 30000, NULL, NULL);
    cr_assert_not_null(a);
    gzform_release(gzcache_get(c, "b", t, 30000, NULL, NULL)); /* "a" leaves the cache */
    size_t n;
    char *back = gunzip(a, 60000, &n); /* still readable (ASan would say otherwise) */
    cr_expect_eq(n, 30000);
    free(back);
    gzform_release(a);
    free(t);
    gzcache_free(c);
}

struct race {
    struct gzcache *c;
    const char *t;
    int got;
};

static void *asker(void *arg) {
    struct race *r = arg;
    for (int i = 0; i < 50; i++) {
        struct gzform *f = gzcache_get(r->c, "same", r->t, 200000, NULL, NULL);
        r->got += f != NULL;
        gzform_release(f);
    }
    return NULL;
}

Test(gzcache, threads_asking_at_once_compress_once) {
    struct gzcache *c = gzcache_create(8, 1 << 20);
    char *t = text(200000);
    pthread_t th[8];
    struct race r[8];
    for (int i = 0; i < 8; i++) {
        r[i] = (struct race){.c = c, .t = t};
        pthread_create(&th[i], NULL, asker, &r[i]);
    }
    int got = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        got += r[i].got;
    }
    struct gzcache_stats st;
    gzcache_stats(c, &st);
    cr_expect_eq(st.compressions, 1, "compressed %llu times", st.compressions);
    cr_expect_eq(st.hits, (unsigned long long)got - 1, "every other form came from the cache");
    cr_expect_gt(got, 0);
    free(t);
    gzcache_free(c);
}
