/* nogpu.h -- the GPU worker of a build without CUDA.
 *
 * A build configured without nvcc has no `divergence-gpu`, so there is
 * nothing that can measure. The server still starts its worker as always
 * (`divergence worker`), and that command, finding no sibling to exec, runs
 * this instead: it speaks the worker protocol (wire.h), says in its hello
 * that there is no GPU and why, and fails every job with that reason. The
 * supervisor then logs it once, /readyz and GET /device say it, and
 * POST /measure answers 503, exactly as on a machine without a GPU; the
 * analysis, the evidence, the widget and the charts are served as usual.
 */
#ifndef DV_NOGPU_H
#define DV_NOGPU_H

/* What the hello and every failed job say. */
#define NOGPU_REASON                                                                                                   \
    "measuring needs the CUDA toolkit: this build has no divergence-gpu (it was configured without nvcc)"

/* Runs the stand-in worker on fds WIRE_FD_IN / WIRE_FD_OUT until the server
 * closes its end. Returns the process exit status (0 on EOF, 2 on a pipe or
 * protocol error). */
int nogpu_worker_main(void);

#endif /* DV_NOGPU_H */
