/* lesson_floor.cu -- a benchmark, not a test: the service's compiled Part 1
 * kernel against the lesson's kernel, in one run, on one GPU.
 *
 * The lesson's kernel is written here as the lesson page ("Warp divergence
 * and what it costs") writes it: `constexpr int kIters = 4096`, the page's
 * takesPathA(), one branch around two `for (int k = 0; k < kIters; ++k)
 * x = fmaf(...)` chains, with the page's `i < n` guards ("lesson"), and the
 * same kernel on an exact grid without the guards ("lesson, no guard"). The
 * service's kernel is mixOneBranch<4096> through dv_run_kernel(), as a
 * measured job launches it. All three run with the same input, the same
 * constants and the same grid, so their outputs must agree bit for bit
 * (checked, and printed as mismatches).
 *
 * Per grid (4096 x 256 and the service's auto grid) and per mode (uniform:
 * every thread on path A; divergent: threadIdx.x & 1), the three kernels are
 * timed between CUDA events round-robin (one of each per round, rounds
 * queued back to back after an untimed lead-in, a warm-up launch of each
 * first), and each row prints the median, the fraction of the FMA floor at
 * the SM clock measured around the grid's samples, and the ratio of the
 * service's median to the lesson's.
 *
 * Usage: lesson_floor [rounds]   (default 200 rounds per grid and mode)
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/gpu/device.h"
#include "kernels/gpu/lesson_kernels.h"
#include "kernels/gpu/lesson_measure.h"
#include "kernels/gpu/smclock.h"
#include "kernels/model/model/chain.h"
#include "kernels/model/model/experiment.h"
#include "kernels/model/model/predicate.h"
#include "kernels/model/model/reference.h"

/* ---------------------------------------------------------------------------
 * The lesson's program, as the page writes it. */

constexpr int kIters = 4096;
constexpr float kMulA = DV_MUL_A, kAddA = DV_ADD_A;
constexpr float kMulB = DV_MUL_B, kAddB = DV_ADD_B;
constexpr unsigned int kWarpSize = 32;
enum : int { kLaneParity = 0, kLaneHalf = 1, kWarpParity = 2, kBlockParity = 3, kAlwaysA = 4 };
static_assert((int)kLaneParity == (int)DV_LANE_PARITY && (int)kAlwaysA == (int)DV_ALWAYS_A, "the service numbers the modes as the lesson");
static_assert(kIters == (int)DV_COMPILED_ITERATIONS, "the service compiles the lesson's kIters");

__host__ __device__ constexpr bool takesPathA(int mode, unsigned int tid, unsigned int block, unsigned int phase) {
    switch (mode) {
        case kLaneParity:
            return ((tid + phase) & 1u) == 0u;
        case kLaneHalf:
            return ((tid + phase) % kWarpSize) < (kWarpSize / 2u);
        case kWarpParity:
            return ((tid / kWarpSize + phase) & 1u) == 0u;
        case kBlockParity:
            return ((block + phase) & 1u) == 0u;
        default:
            return true;
    }
}

__global__ void mixOneBranch(const float* __restrict__ in, float* __restrict__ out, size_t n, int mode) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    float x = (i < n) ? in[i] : 0.0f;

    if (takesPathA(mode, threadIdx.x, blockIdx.x, 0u)) {
        for (int k = 0; k < kIters; ++k) {
            x = fmaf(x, kMulA, kAddA);
        }
    } else {
        for (int k = 0; k < kIters; ++k) {
            x = fmaf(x, kMulB, kAddB);
        }
    }

    if (i < n) {
        out[i] = x;
    }
}

/* The same kernel for an exact grid: no guard on the load or the store. */
__global__ void mixOneBranchExact(const float* __restrict__ in, float* __restrict__ out, int mode) {
    const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    float x = in[i];

    if (takesPathA(mode, threadIdx.x, blockIdx.x, 0u)) {
        for (int k = 0; k < kIters; ++k) {
            x = fmaf(x, kMulA, kAddA);
        }
    } else {
        for (int k = 0; k < kIters; ++k) {
            x = fmaf(x, kMulB, kAddB);
        }
    }

    out[i] = x;
}

/* ---------------------------------------------------------------------------
 * The bench. */

enum { K_SERVICE, K_LESSON, K_EXACT, K_COUNT };
static const char* const kNames[K_COUNT] = {"service mixOneBranch<4096>", "lesson", "lesson, no guard"};

static void die(const char* what, cudaError_t e) {
    std::fprintf(stderr, "lesson_floor: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
}
#define CK(call)                              \
    do {                                      \
        cudaError_t e_ = (call);              \
        if (e_ != cudaSuccess) die(#call, e_); \
    } while (0)

static void launch(int k, unsigned blocks, const float* in, float* out, enum dv_mode mode) {
    const unsigned long long n = (unsigned long long)blocks * 256u;
    if (k == K_SERVICE) {
        struct dv_launch l = {in, out, n, blocks, 256u, 1u, DV_COMPILED_ITERATIONS, mode, NULL, NULL};
        char err[ERR_LEN];
        if (dv_run_kernel(DV_KERNEL_BRANCH, &l, err) != 0) {
            std::fprintf(stderr, "lesson_floor: %s\n", err);
            std::exit(1);
        }
    } else if (k == K_LESSON) {
        mixOneBranch<<<blocks, 256>>>(in, out, n, mode);
        CK(cudaGetLastError());
    } else {
        mixOneBranchExact<<<blocks, 256>>>(in, out, mode);
        CK(cudaGetLastError());
    }
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

int main(int argc, char** argv) {
    const unsigned rounds = argc > 1 ? (unsigned)std::atoi(argv[1]) : 200u;
    const unsigned batch = 10;
    char err[ERR_LEN] = "";
    struct dv_report* r = experiment_report_create();
    if (!r || rounds < 1) {
        std::fprintf(stderr, "lesson_floor: usage: lesson_floor [rounds >= 1]\n");
        return 2;
    }
    if (device_query(0, &r->device, err) != 0) {
        std::fprintf(stderr, "lesson_floor: %s\n", err);
        return 1;
    }
    const struct dv_device* d = &r->device;
    double mhz0 = 0;
    if (smclock_measure(&mhz0, err) != 0) {
        std::fprintf(stderr, "lesson_floor: %s\n", err);
        return 1;
    }
    struct dv_options o;
    experiment_defaults(&o);
    o.blocks = 0;
    unsigned auto_blocks = 0;
    if (lesson_choose_blocks(&o, r, mhz0, &auto_blocks, err) != 0) {
        std::fprintf(stderr, "lesson_floor: %s\n", err);
        return 1;
    }
    const unsigned grids[2] = {DV_DEFAULT_BLOCKS, auto_blocks};
    const unsigned long long nmax = (unsigned long long)std::max(grids[0], grids[1]) * 256u;

    std::vector<float> h_in(nmax), h_out[K_COUNT];
    reference_input(h_in.data(), nmax);
    float *d_in = NULL, *d_out[K_COUNT] = {NULL, NULL, NULL};
    CK(cudaMalloc(&d_in, sizeof(float) * nmax));
    CK(cudaMemcpy(d_in, h_in.data(), sizeof(float) * nmax, cudaMemcpyHostToDevice));
    for (int k = 0; k < K_COUNT; k++) {
        CK(cudaMalloc(&d_out[k], sizeof(float) * nmax));
        h_out[k].resize(nmax);
    }
    std::vector<cudaEvent_t> ev(2 * batch * K_COUNT);
    for (auto& e : ev) CK(cudaEventCreate(&e));

    std::printf("GPU: %s (cc %d.%d), %d SMs x %d FP32 lanes, rated %.0f MHz\n", d->name, d->cc_major, d->cc_minor,
                d->sm_count, d->fp32_lanes_per_sm, d->rated_sm_clock_mhz);
    std::printf("auto grid: %s\n", r->config.blocks_reason);
    std::printf("%u interleaved rounds per grid and mode, medians; floor = FMAs / (SMs x lanes x clock)\n\n", rounds);
    std::printf("%-8s %-10s %-28s %10s %8s %9s %10s\n", "blocks", "mode", "kernel", "median ms", "floor", "clock MHz",
                "vs lesson");

    const enum dv_mode modes[2] = {DV_ALWAYS_A, DV_LANE_PARITY};
    const char* const mode_names[2] = {"uniform", "divergent"};
    for (int gi = 0; gi < 2; gi++) {
        const unsigned blocks = grids[gi];
        const unsigned long long n = (unsigned long long)blocks * 256u;
        for (int mi = 0; mi < 2; mi++) {
            const enum dv_mode mode = modes[mi];
            std::vector<double> samples[K_COUNT];
            double mhz_a = 0, mhz_b = 0;
            for (int k = 0; k < K_COUNT; k++) launch(k, blocks, d_in, d_out[k], mode); /* warm-up */
            CK(cudaDeviceSynchronize());
            if (smclock_measure(&mhz_a, err) != 0) {
                std::fprintf(stderr, "lesson_floor: %s\n", err);
                return 1;
            }
            for (unsigned taken = 0; taken < rounds;) {
                const unsigned nb = std::min(batch, rounds - taken);
                launch(K_COUNT - 1, blocks, d_in, d_out[K_COUNT - 1], mode); /* lead-in */
                for (unsigned b = 0; b < nb; b++)
                    for (int k = 0; k < K_COUNT; k++) {
                        /* Rotate the order per round so no kernel always follows the same one. */
                        const int kk = (k + (int)(taken + b)) % K_COUNT;
                        CK(cudaEventRecord(ev[2 * (b * K_COUNT + kk)], 0));
                        launch(kk, blocks, d_in, d_out[kk], mode);
                        CK(cudaEventRecord(ev[2 * (b * K_COUNT + kk) + 1], 0));
                    }
                CK(cudaDeviceSynchronize());
                for (unsigned b = 0; b < nb; b++)
                    for (int k = 0; k < K_COUNT; k++) {
                        float ms = 0;
                        CK(cudaEventElapsedTime(&ms, ev[2 * (b * K_COUNT + k)], ev[2 * (b * K_COUNT + k) + 1]));
                        samples[k].push_back(ms);
                    }
                taken += nb;
            }
            if (smclock_measure(&mhz_b, err) != 0) {
                std::fprintf(stderr, "lesson_floor: %s\n", err);
                return 1;
            }
            const double mhz = 0.5 * (mhz_a + mhz_b);
            const double rate = (double)d->sm_count * d->fp32_lanes_per_sm * mhz * 1e3; /* FMAs per ms */
            const double floor_ms = (double)n * kIters / rate;
            double med[K_COUNT];
            for (int k = 0; k < K_COUNT; k++) {
                med[k] = median(samples[k]);
                CK(cudaMemcpy(h_out[k].data(), d_out[k], sizeof(float) * n, cudaMemcpyDeviceToHost));
            }
            for (int k = 0; k < K_COUNT; k++) {
                unsigned long long bad = 0;
                for (unsigned long long i = 0; i < n; i++)
                    bad += std::memcmp(&h_out[k][i], &h_out[K_LESSON][i], sizeof(float)) != 0;
                std::printf("%-8u %-10s %-28s %10.4f %8.4f %9.0f %10.4f%s\n", blocks, mode_names[mi], kNames[k],
                            med[k], floor_ms / med[k], mhz, med[k] / med[K_LESSON],
                            bad ? "  OUTPUT DIFFERS" : "");
                if (bad) std::printf("         %llu of %llu outputs differ from the lesson's\n", bad, n);
            }
        }
    }
    for (auto& e : ev) cudaEventDestroy(e);
    for (int k = 0; k < K_COUNT; k++) cudaFree(d_out[k]);
    cudaFree(d_in);
    experiment_report_free(r);
    return 0;
}
