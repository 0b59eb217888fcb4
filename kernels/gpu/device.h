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

#include "kernels/model/experiment.h"

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

/* FP32 fused multiply-add lanes per SM for a compute capability (0 if unknown). */
int device_fp32_lanes(int cc_major, int cc_minor);

#ifdef __cplusplus
}
#endif

#endif /* DV_DEVICE_H */
