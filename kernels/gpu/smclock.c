/* smclock.c -- the SM clock from a timed clock64() spin (smclock.h). */
#include "kernels/gpu/smclock.h"

#include "kernels/gpu/cuda_call.h"
#include "kernels/gpu/lesson_kernels.h"

#define CLOCK_SPIN_CYCLES 20000000LL /* ~10 ms at 2 GHz */

int smclock_measure(double *mhz, char *err) {
    int rc = 0, dev = 0, sms = 0;
    long long *d_out = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    float ms = 0;
    if ((rc = DV_CUDA_CALL(cudaGetDevice(&dev), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaMalloc((void **)&d_out, sizeof(long long) * (size_t)sms), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaEventCreate(&start), err)) != 0 || (rc = DV_CUDA_CALL(cudaEventCreate(&stop), err)) != 0)
        goto cleanup;
    /* One short spin first: the clock ramps up from idle. */
    if ((rc = dv_run_clock_spin(CLOCK_SPIN_CYCLES / 4, (unsigned)sms, d_out, err)) != 0) goto cleanup;
    if ((rc = DV_CUDA_CALL(cudaEventRecord(start, 0), err)) != 0) goto cleanup;
    if ((rc = dv_run_clock_spin(CLOCK_SPIN_CYCLES, (unsigned)sms, d_out, err)) != 0) goto cleanup;
    if ((rc = DV_CUDA_CALL(cudaEventRecord(stop, 0), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaEventSynchronize(stop), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaEventElapsedTime(&ms, start, stop), err)) != 0)
        goto cleanup;
    if (ms <= 0) {
        dv_seterr(err, "clock: spin kernel timed at %.6f ms", ms);
        rc = DV_ERR;
        goto cleanup;
    }
    *mhz = (double)CLOCK_SPIN_CYCLES / (ms * 1e3);
cleanup:
    if (d_out) cudaFree(d_out);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    return rc;
}
