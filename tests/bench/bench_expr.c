/* bench_expr.c -- nanoseconds per expr_eval() over a 1M-thread grid.
 *
 * The analysis evaluates a predicate once per thread, so the figure that
 * matters is the cost of one call for the lesson's predicates and for a
 * heavier expression with short-circuiting and lane/warp. Not a test: build
 * and run by hand,
 *   cc -std=c11 -O2 -Ikernels kernels/expr.c tests/bench_expr.c -o bench_expr
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>

#include "kernels/base/timeutil.h"
#include "kernels/model/model/expr.h"

int main(void) {
    static const char *srcs[] = {
        "threadIdx.x < 16",
        "(threadIdx.x & 1) == 0",
        "(threadIdx.x & 31) < 16",
        "(threadIdx.x / 32 & 1) == 0",
        "(blockIdx.x & 1) == 0",
        "lane < 16 && (warp % 3 == 0 || blockIdx.x > 7) ? threadIdx.x << 2 : -1",
    };
    const long long block = 256, grid = 4096; /* 1,048,576 threads */
    for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++) {
        char err[ERR_LEN];
        int col;
        struct expr *e = expr_parse(srcs[s], &col, err);
        if (!e) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        struct expr_env env = {0, 0, 0, block, 1};
        long long sum = 0, v;
        double t0 = (timeutil_now_ms() * 1e6);
        for (long long b = 0; b < grid; b++) {
            env.block_x = b;
            for (long long t = 0; t < block; t++) {
                env.thread_x = t;
                if (expr_eval(e, &env, &v, &col, err) < 0) {
                    fprintf(stderr, "%s\n", err);
                    expr_free(e);
                    return 1;
                }
                sum += v;
            }
        }
        double ns = ((timeutil_now_ms() * 1e6) - t0) / (double)(block * grid);
        printf("%6.1f ns/eval  %-72s (sum %lld)\n", ns, srcs[s], sum);
        expr_free(e);
    }
    return 0;
}
