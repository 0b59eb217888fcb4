/* cuda_call.c -- classification of CUDA runtime errors (cuda_call.h). */
#include "kernels/gpu/cuda_call.h"

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

int cuda_call(cudaError_t e, const char *what, char *err) {
    if (e == cudaSuccess) return 0;
    dv_seterr(err, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return cuda_classify(e);
}

int cuda_launched(const char *what, char *err) { return cuda_call(cudaGetLastError(), what, err); }
