/* entity.c -- http_reply_entity() (http.h): one representation in the
 * coding the request asks for, with its validators.
 *
 * The choice (encoding.h), the 304 (conditional.h, either coding's ETag)
 * and the kept gzip form (gzcache.h) meet here, so every route that sends
 * something a client keeps (the evidence, the static files, a finished
 * job) answers the same way. A file's bytes are read only on the miss that
 * makes its gzip form; identity is still sent from the file descriptor.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/http/conditional.h"
#include "server/http/encoding.h"
#include "server/http/http.h"

struct file_read {
    int fd;
    size_t len;
};

/* The whole file from its start, malloc()ed; NULL when short or out of memory. */
static char *read_file(void *ctx, size_t *len) {
    struct file_read *f = ctx;
    char *buf = malloc(f->len ? f->len : 1);
    size_t got = 0;
    while (buf && got < f->len) {
        ssize_t n = pread(f->fd, buf + got, f->len - got, (off_t)got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    if (!buf || got != f->len) {
        free(buf);
        return NULL;
    }
    *len = got;
    return buf;
}

static void reply_identity(struct http_req *r, const struct http_entity *e, const char *etag) {
    if (etag[0]) http_req_add_header(r, "ETag", etag);
    if (e->body) http_reply(r, 200, e->content_type, e->body, e->len);
    else http_reply_fd(r, 200, e->content_type, e->fd, e->len);
}

void http_reply_entity(struct http_req *r, const struct http_entity *e) {
    char id_tag[ENCODING_ETAG_LEN] = "", gz_tag[ENCODING_ETAG_LEN] = "";
    const char *key = e->key ? e->key : e->etag;
    const int can = key && encoding_compressible(e->content_type, e->len);
    enum encoding enc = can ? encoding_choose(http_req_header(r, "Accept-Encoding")) : ENCODING_IDENTITY;
    if (can) http_req_add_header(r, "Vary", "Accept-Encoding");
    if (e->etag) {
        encoding_etag(e->etag, ENCODING_IDENTITY, id_tag);
        if (can) encoding_etag(e->etag, ENCODING_GZIP, gz_tag);
    }
    if (conditional_not_modified_either(id_tag, gz_tag, e->last_modified, http_req_header(r, "If-None-Match"),
                                        http_req_header(r, "If-Modified-Since"), time(NULL))) {
        const char *tag = enc == ENCODING_GZIP && gz_tag[0] ? gz_tag : id_tag;
        if (tag[0]) http_req_add_header(r, "ETag", tag);
        if (!e->body) close(e->fd);
        http_reply(r, 304, NULL, "", 0);
        return;
    }
    struct file_read fr = {.fd = e->fd, .len = e->len};
    struct gzform *f = enc == ENCODING_GZIP
                           ? gzcache_get(http_req_gzcache(r), key, e->body, e->len, e->body ? NULL : read_file, &fr)
                           : NULL;
    if (!f) {
        reply_identity(r, e, id_tag);
        return;
    }
    if (gz_tag[0]) http_req_add_header(r, "ETag", gz_tag);
    http_req_add_header(r, "Content-Encoding", "gzip");
    http_reply(r, 200, e->content_type, f->data, f->len);
    gzform_release(f);
    if (!e->body) close(e->fd);
}
