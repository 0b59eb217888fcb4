/* workerproc.h -- `divergence-gpu worker`: the process that owns the GPU.
 *
 * Started by the server's supervisor (worker.h) with its job pipe on fd 3 and
 * its reply pipe on fd 4 (wire.h), as `divergence-gpu worker [--device N]`
 * (N the CUDA ordinal it owns, default 0; every job runs there). It makes
 * one measurement session (gpu/session.h) for its life, queries the device
 * into it, warms it (gpu/warmup.h: every kernel the lesson runs loaded and
 * launched, the counter profiler built, the buffers made; logged with its
 * time), and only then says hello, so the server's /readyz says ready when
 * the first job costs what the hundredth does. Then it loops: read a job,
 * request_parse_json() its request, measure_run_session(), report_document(),
 * reply (wire.h); or read a batch, measure its jobs in one session
 * (gpu/batch.h), their instruction profiles in one process, and reply to
 * each job with its own document. It
 * exits when its input closes, and right after replying to a job that hit a
 * sticky CUDA error (the context is lost; the supervisor starts a fresh
 * process). Without a GPU it stays up and answers
 * every job with DV_ENOGPU and CUDA's reason.
 */
#ifndef DV_WORKERPROC_H
#define DV_WORKERPROC_H

/* Entry point of `divergence-gpu worker`. Returns the process exit status: 0 on
 * end of input, 3 after a sticky CUDA error, 2 on a protocol or pipe error. */
int workerproc_main(int argc, char **argv);

#endif /* DV_WORKERPROC_H */
