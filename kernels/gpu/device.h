/* device.h -- which GPU this is: identity, limits, driver and clock rating.
 *
 * The figures a document's `device` object reports and the FMA floor needs:
 * SMs, FP32 lanes per SM (from the compute capability: cudart does not say),
 * the rated SM clock, and the NVIDIA kernel module's release (cudart reports
 * only the CUDA API level). device_query() also makes `ordinal` current.
 */
#ifndef DV_DEVICE_H
#define DV_DEVICE_H

#include <stddef.h>

#include "kernels/model/model/experiment.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills `d` with the identity of device `ordinal` and makes it current.
 * Returns 0, DV_ENOGPU (d->reason filled too), DV_ERR for an ordinal out of
 * range, or DV_ESTICKY. */
int device_query(int ordinal, struct dv_device *d, char *err);

/* The release in the first line of /proc/driver/nvidia/version into `out`.
 * Returns 0, or -1 (out "") when the line names none. */
int device_driver_release(const char *version_line, char *out, size_t len);

/* The oldest driver the linked CUDA 13 runtime runs on: the R580 branch,
 * 580.65.06 the first release of it for CUDA 13.0 (Linux x86_64); CUDA's
 * minor version compatibility runs any 13.x runtime on any R580 driver. */
#define DEVICE_DRIVER_MIN_BRANCH "R580"
#define DEVICE_DRIVER_MIN_RELEASE "580.65.06"

/* When the driver supports an older CUDA than the runtime linked in (what
 * cudart reports as cudaErrorInsufficientDriver): a sentence for /readyz
 * and a document's device.reason into `out`, naming the minimum and what
 * was found. `driver` and `runtime` are CUDA versions in the 13000 form
 * (cudaDriverGetVersion, cudaRuntimeGetVersion); `release` the kernel
 * module's ("550.54.15"), "" when unknown. Returns 1 when it wrote one, 0
 * when the driver is not too old: new enough, or no driver at all
 * (`driver` 0: cudart then reports the same error, for another reason). */
int device_driver_too_old(int driver, int runtime, const char *release, char *out, size_t len);

/* FP32 fused multiply-add lanes per SM for a compute capability (0 if unknown). */
int device_fp32_lanes(int cc_major, int cc_minor);

#ifdef __cplusplus
}
#endif

#endif /* DV_DEVICE_H */
