/* cuda_call.c -- the CUDA call checker and the classification of CUDA
 * runtime errors (cuda_call.h). */
#include "kernels/gpu/cuda_call.h"

#include <string.h>

int cuda_classify(cudaError_t e) {
    switch (e) {
    case cudaSuccess:
        return 0;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorNoKernelImageForDevice:
        return DV_ENOGPU;
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:
        return DV_ESTICKY;
    default:
        return DV_ERR;
    }
}

/* This file's own __FILE__ ends in its path from the repository's top;
 * what comes before is the checkout's location, the same prefix every other
 * file of the tree is compiled with, and no part of a message. */
const char *cuda_source_path(const char *file) {
    static const char self[] = __FILE__, tail[] = "kernels/gpu/cuda_call.c";
    const size_t n = sizeof self - 1, t = sizeof tail - 1;
    if (!file) return "";
    if (n < t || strcmp(self + n - t, tail) != 0) return file;
    return strncmp(file, self, n - t) == 0 ? file + (n - t) : file;
}

int cuda_check(cudaError_t e, const char *call, const char *file, int line, char *err) {
    if (e == cudaSuccess) return 0;
    dv_seterr(err, "%s at %s:%d: %s (%s)", call, cuda_source_path(file), line, cudaGetErrorString(e),
              cudaGetErrorName(e));
    return cuda_classify(e);
}
