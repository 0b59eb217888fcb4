/* device.c -- device identity (device.h). */
#define _POSIX_C_SOURCE 200809L
#include "kernels/gpu/device.h"

#include <stdio.h>
#include <string.h>

#include "kernels/gpu/cuda_call.h"

int device_fp32_lanes(int major, int minor) {
    switch (major) {
    case 3: return 192;
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;                    /* Volta, Turing */
    case 8: return minor == 0 ? 64 : 128; /* A100 64; GA10x, Ada 128 */
    case 9: return 128;                   /* Hopper */
    case 10:
    case 11:
    case 12: return 128;                  /* Blackwell */
    default: return 0;
    }
}

/* The first line of /proc/driver/nvidia/version reads "NVRM version: NVIDIA
 * UNIX [Open] Kernel Module [for x86_64]  580.159.04  Release Build ..."; the
 * release is the first token after "Module" made of digits and dots only. */
int device_driver_release(const char *version_line, char *out, size_t len) {
    char line[512];
    out[0] = '\0';
    snprintf(line, sizeof(line), "%s", version_line);
    char *k = strstr(line, "Module");
    char *save = NULL;
    for (char *tok = k ? strtok_r(k, " \t\n", &save) : NULL; tok; tok = strtok_r(NULL, " \t\n", &save)) {
        size_t n = strlen(tok);
        if (n > 0 && n < len && strspn(tok, "0123456789.") == n && strchr(tok, '.')) {
            memcpy(out, tok, n + 1);
            return 0;
        }
    }
    return -1;
}

static void driver_release(char *out, size_t len) {
    char line[512];
    out[0] = '\0';
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return;
    if (fgets(line, sizeof(line), f)) device_driver_release(line, out, len);
    fclose(f);
}

int device_driver_too_old(int driver, int runtime, const char *release, char *out, size_t len) {
    if (driver <= 0 || driver >= runtime) return 0;
    char found[96];
    if (release && release[0])
        snprintf(found, sizeof(found), "driver %s (CUDA %d.%d)", release, driver / 1000, (driver % 1000) / 10);
    else
        snprintf(found, sizeof(found), "a driver for CUDA %d.%d (its release not known)", driver / 1000,
                 (driver % 1000) / 10);
    snprintf(out, len,
             "the NVIDIA driver is too old for this build's CUDA %d.%d runtime: found %s; install an %s driver, %s or "
             "newer (deploy/README.md)",
             runtime / 1000, (runtime % 1000) / 10, found, DEVICE_DRIVER_MIN_BRANCH, DEVICE_DRIVER_MIN_RELEASE);
    return 1;
}

/* Why cudart found no device, in `d->reason`: the CUDA error `err`, or,
 * when the driver is only too old, the sentence that says so (then also at
 * the head of `err`). */
static void no_device_reason(struct dv_device *d, char *err) {
    int driver = 0, runtime = 0;
    char scratch[ERR_LEN], release[32], why[ERR_LEN];
    snprintf(d->reason, sizeof(d->reason), "%s", err);
    if (DV_CUDA_CALL(cudaDriverGetVersion(&driver), scratch) != 0 ||
        DV_CUDA_CALL(cudaRuntimeGetVersion(&runtime), scratch) != 0)
        return;
    driver_release(release, sizeof(release));
    if (!device_driver_too_old(driver, runtime, release, why, sizeof(why))) return;
    snprintf(d->reason, sizeof(d->reason), "%s", why);
    snprintf(scratch, sizeof(scratch), "%s", err);
    dv_seterr(err, "%s (%s)", why, scratch);
}

int device_query(int ordinal, struct dv_device *d, char *err) {
    memset(d, 0, sizeof(*d));
    d->ordinal = ordinal;
    int rc = 0, count = 0;
    if ((rc = DV_CUDA_CALL(cudaGetDeviceCount(&count), err)) != 0) {
        if (rc != DV_ESTICKY) rc = DV_ENOGPU;
        no_device_reason(d, err);
        return rc;
    }
    if (count == 0) {
        dv_seterr(err, "cudaGetDeviceCount: no CUDA device found");
        snprintf(d->reason, sizeof(d->reason), "%s", err);
        return DV_ENOGPU;
    }
    if (ordinal < 0 || ordinal >= count) {
        dv_seterr(err, "device: ordinal %d out of range, this machine has %d device(s) (0..%d)", ordinal, count,
                  count - 1);
        snprintf(d->reason, sizeof(d->reason), "%s", err);
        return DV_ERR;
    }
    struct cudaDeviceProp p;
    int clock_khz = 0;
    if ((rc = DV_CUDA_CALL(cudaSetDevice(ordinal), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaGetDeviceProperties(&p, ordinal), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaDriverGetVersion(&d->driver_version), err)) != 0 ||
        (rc = DV_CUDA_CALL(cudaRuntimeGetVersion(&d->runtime_version), err)) != 0) {
        snprintf(d->reason, sizeof(d->reason), "%s", err);
        return rc;
    }
    d->present = 1;
    driver_release(d->nvidia_driver_version, sizeof(d->nvidia_driver_version));
    snprintf(d->name, sizeof(d->name), "%s", p.name);
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->sm_count = p.multiProcessorCount;
    d->warp_size = p.warpSize;
    d->rated_sm_clock_mhz = clock_khz / 1000.0;
    d->fp32_lanes_per_sm = device_fp32_lanes(p.major, p.minor);
    d->total_mem_bytes = p.totalGlobalMem;
    d->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    return 0;
}
