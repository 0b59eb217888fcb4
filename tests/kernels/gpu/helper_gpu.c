/* helper_gpu.c -- asks CUDA (through the runner) whether device 0 is usable. */
#include <stdio.h>

#include "tests/kernels/gpu/helper_gpu.h"
#include "kernels/gpu/device.h"
#include "kernels/gpu/measure.h"

int helper_gpu_available(char *why) {
    struct dv_device d;
    char err[ERR_LEN] = "";
    int rc = device_query(0, &d, err);
    if (rc == 0 && d.present) return 1;
    snprintf(why, ERR_LEN, "%s", err[0] ? err : "no device");
    return 0;
}
