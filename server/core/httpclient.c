/* httpclient.c -- see httpclient.h.
 *
 * One curl easy handle per call, cleaned up before returning, so no
 * connection or state outlives a request. The body and the header block
 * grow in two buffers; the header block is restarted at every status line,
 * so after a redirect or a "100 Continue" it holds only the final answer's.
 * curl_global_init() runs once, before the first handle (it is not
 * thread-safe in every libcurl this builds against).
 */
#define _POSIX_C_SOURCE 200809L
#include "server/core/httpclient.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "kernels/base/status.h"

struct buf {
    char *p;
    size_t len, cap;
    int over; /* past HTTPCLIENT_MAX_BODY */
    int nomem;
};

/* Appends `n` bytes and keeps the buffer NUL-terminated. */
static int buf_add(struct buf *b, const char *s, size_t n) {
    if (b->len + n > HTTPCLIENT_MAX_BODY) {
        b->over = 1;
        return -1;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->nomem = 1;
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg) {
    return buf_add(arg, data, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg) {
    struct buf *b = arg;
    size_t len = size * n;
    if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) b->len = 0;     /* a new answer */
    if (len == 2 && data[0] == '\r' && data[1] == '\n') return len; /* end of the block */
    return buf_add(b, data, len) == 0 ? len : 0;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;
static void global_init(void) { global_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

int httpclient_url_check(const char *url, char *err) {
    CURLU *u = curl_url();
    if (!u) {
        dv_seterr(err, "%s: out of memory", url);
        return -1;
    }
    int rc = -1;
    char *scheme = NULL, *host = NULL;
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, 0);
    if (uc != CURLUE_OK) {
        dv_seterr(err, "%s: %s (expected http[s]://HOST[:PORT][/PATH])", url, curl_url_strerror(uc));
        goto cleanup;
    }
    if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0)) {
        dv_seterr(err, "%s: only http:// and https:// are supported", url);
        goto cleanup;
    }
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0]) {
        dv_seterr(err, "%s: no host (expected http[s]://HOST[:PORT][/PATH])", url);
        goto cleanup;
    }
    rc = 0;
cleanup:
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return rc;
}

/* The request headers: the caller's lines, plus an empty Content-Type (which
 * makes libcurl send none) when a body goes without one. NULL on no memory. */
static struct curl_slist *header_list(const struct httpclient_request *req, int has_body, int *nomem) {
    struct curl_slist *list = NULL, *next;
    int has_type = 0;
    *nomem = 0;
    for (const char *p = req->headers; p && *p;) {
        const char *e = strstr(p, "\r\n");
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 0) {
            char *line = strndup(p, n);
            if (!line || !(next = curl_slist_append(list, line))) {
                free(line);
                *nomem = 1;
                curl_slist_free_all(list);
                return NULL;
            }
            list = next;
            if (strncasecmp(line, "Content-Type:", 13) == 0) has_type = 1;
            free(line);
        }
        p += n + (e ? 2 : 0);
    }
    if (has_body && !has_type) {
        if (!(next = curl_slist_append(list, "Content-Type:"))) {
            *nomem = 1;
            curl_slist_free_all(list);
            return NULL;
        }
        list = next;
    }
    return list;
}

/* What `req` asks of handle `c`: the URL, the protocols, the timeout, the
 * redirects, the proxy, the headers, the method and the body. */
static void set_request(CURL *c, const struct httpclient_request *req, const char *method, const char *url,
                        struct curl_slist *headers, int post, int has_body) {
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : HTTPCLIENT_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    if (req->follow) {
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)HTTPCLIENT_MAX_REDIRECTS);
        /* A POST stays a POST after 301/302 (a moved service), not after 303. */
        curl_easy_setopt(c, CURLOPT_POSTREDIR, (long)(CURL_REDIR_POST_301 | CURL_REDIR_POST_302));
    }
    if (req->no_proxy) curl_easy_setopt(c, CURLOPT_PROXY, "");
    if (req->path_as_is) curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    if (post) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
    } else if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L); /* an answer without a body */
    } else if (strcmp(method, "GET") != 0 || has_body) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    if (has_body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(req->body ? req->len : 0));
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body ? (const char *)req->body : "");
    }
}

int httpclient_send(const struct httpclient_request *req, struct httpclient_response *resp, char *err) {
    memset(resp, 0, sizeof *resp);
    resp->status = -1;
    const char *method = req->method ? req->method : "GET";
    const char *url = req->url ? req->url : "";
    if (httpclient_url_check(url, err) != 0) return -1;
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK) {
        dv_seterr(err, "%s %s: libcurl: %s", method, url, curl_easy_strerror(global_rc));
        return -1;
    }
    int post = strcmp(method, "POST") == 0;
    int has_body = req->body != NULL || post;
    int nomem = 0, rc = -1;
    struct buf body = {0}, head = {0};
    char cerr[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = header_list(req, has_body, &nomem);
    CURL *c = nomem ? NULL : curl_easy_init();
    if (!c) {
        dv_seterr(err, "%s %s: out of memory", method, url);
        goto cleanup;
    }
    set_request(c, req, method, url, headers, post, has_body);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &head);

    CURLcode cc = curl_easy_perform(c);
    if (body.over || head.over) {
        dv_seterr(err, "%s %s: the answer is over %u bytes", method, url, HTTPCLIENT_MAX_BODY);
        goto cleanup;
    }
    if (body.nomem || head.nomem) {
        dv_seterr(err, "%s %s: out of memory", method, url);
        goto cleanup;
    }
    if (cc != CURLE_OK) {
        dv_seterr(err, "%s %s: %s", method, url, cerr[0] ? cerr : curl_easy_strerror(cc));
        goto cleanup;
    }
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    /* An empty body or header block is still a string. */
    if ((!body.p && buf_add(&body, "", 0) != 0) || (!head.p && buf_add(&head, "", 0) != 0)) {
        dv_seterr(err, "%s %s: out of memory", method, url);
        goto cleanup;
    }
    resp->status = status;
    resp->headers = head.p;
    resp->body = body.p;
    resp->len = body.len;
    head.p = body.p = NULL;
    rc = 0;
cleanup:
    curl_easy_cleanup(c);
    curl_slist_free_all(headers);
    free(body.p);
    free(head.p);
    return rc;
}

const char *httpclient_header(const struct httpclient_response *resp, const char *name, char *buf, size_t len) {
    if (!resp->headers || len == 0) return NULL;
    size_t nl = strlen(name);
    /* The first line is the status line: headers start after a "\r\n". */
    for (const char *p = strstr(resp->headers, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        const char *line = p + 2;
        if (strncasecmp(line, name, nl) != 0 || line[nl] != ':') continue;
        const char *v = line + nl + 1;
        while (*v == ' ' || *v == '\t') v++;
        const char *e = strstr(v, "\r\n");
        size_t vl = e ? (size_t)(e - v) : strlen(v);
        while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
        if (vl >= len) vl = len - 1;
        memcpy(buf, v, vl);
        buf[vl] = '\0';
        return buf;
    }
    return NULL;
}

void httpclient_response_cleanup(struct httpclient_response *resp) {
    if (!resp) return;
    free(resp->headers);
    free(resp->body);
    resp->headers = resp->body = NULL;
    resp->len = 0;
}
