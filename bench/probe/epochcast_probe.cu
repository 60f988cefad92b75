/*
 * epochcast_probe.cu: epochcast-probe, the hardware probe of DESIGN section 7.  On one GPU
 * (CUDA Runtime + cuBLAS) it measures host-to-device and device-to-host bandwidth (pinned
 * and pageable), device copy and elementwise bandwidth, kernel launch latency (host) and the
 * back-to-back kernel floor (GPU), GEMM throughput over a grid of shapes in every precision
 * the GPU supports (fp32, tf32, fp16, bf16 with fp32 accumulate, as PyTorch calls cuBLAS),
 * and peer-to-peer bandwidth when there are several GPUs.  Timing: warm-up first, CUDA
 * events around each repeat, the median of the repeats; inputs are random, not zeros (zero
 * operands let some GPUs save power and clock higher).  probe_output.c writes the results:
 * a models/gpus.csv row, the GEMM-efficiency curve and the raw measurements.
 *
 *   epochcast-probe [-o DIR] [--device N] [--models DIR] [--quick]
 */
#include "probe_output.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef EC_MODELS_DIR
#define EC_MODELS_DIR "models"
#endif

#define CUDA_OK(call)                                                                                      \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) {                                                                           \
            std::fprintf(stderr, "epochcast-probe: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                         cudaGetErrorString(e_));                                                          \
            std::exit(1);                                                                                  \
        }                                                                                                  \
    } while (0)

#define CUBLAS_OK(call)                                                                                    \
    do {                                                                                                   \
        cublasStatus_t s_ = (call);                                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                 \
            std::fprintf(stderr, "epochcast-probe: %s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__,     \
                         #call, (int)s_);                                                                  \
            std::exit(1);                                                                                  \
        }                                                                                                  \
    } while (0)

static const char usage[] =
    "usage: epochcast-probe [-o DIR] [--device N] [--models DIR] [--quick]\n"
    "\n"
    "Measure one GPU and write, into DIR (default .):\n"
    "  gpu_profile.csv          a hardware profile row in the schema of models/gpus.csv\n"
    "                           (id <gpu>-probed): append it to a copy of models/gpus.csv\n"
    "                           and predict with gpu=<gpu>-probed --models COPY\n"
    "  gemm_curve.csv           m,n,k,precision,flop_per_s,efficiency_frac per GEMM shape\n"
    "  probe_measurements.csv   metric,value,unit: H2D/D2H pinned and pageable, device\n"
    "                           copy, elementwise, launch latency, kernel floor, P2P\n"
    "options:\n"
    "  -o DIR        output folder (must exist)\n"
    "  --device N    the CUDA device to measure [0]\n"
    "  --models DIR  the models/ folder whose gpus.csv gives the template row [built-in]\n"
    "  --quick       fewer shapes and repeats (a smoke test, not a measurement)\n";

struct timing {
    int warmup, repeats;
};

/* Median of the times of `repeats` runs of fn on the stream, after `warmup` runs. */
template <class F> static double median_time_s(const timing &t, cudaStream_t stream, F fn)
{
    cudaEvent_t a, b;
    CUDA_OK(cudaEventCreate(&a));
    CUDA_OK(cudaEventCreate(&b));
    for (int i = 0; i < t.warmup; i++)
        fn();
    CUDA_OK(cudaStreamSynchronize(stream));
    std::vector<double> times;
    for (int i = 0; i < t.repeats; i++) {
        CUDA_OK(cudaEventRecord(a, stream));
        fn();
        CUDA_OK(cudaEventRecord(b, stream));
        CUDA_OK(cudaEventSynchronize(b));
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, a, b));
        times.push_back(ms * 1e-3);
    }
    CUDA_OK(cudaEventDestroy(a));
    CUDA_OK(cudaEventDestroy(b));
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    return n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
}

/* ---- kernels ----------------------------------------------------------------------------- */

__global__ void empty_kernel() {}

__global__ void axpy_kernel(float a, const float *__restrict__ x, float *__restrict__ y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

/* Uniform values in [-1, 1) from a per-element hash: random, reproducible, never all zero. */
template <class T> __global__ void fill_kernel(T *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 16;
        h *= 2246822519u;
        h ^= h >> 13;
        float v = (float)(h & 0xffffff) / (float)0x1000000 * 2.0f - 1.0f;
        p[i] = (T)v;
    }
}

template <class T> static void fill_random(T *p, size_t n, unsigned seed)
{
    fill_kernel<T><<<1024, 256>>>(p, n, seed);
    CUDA_OK(cudaGetLastError());
}

/* ---- transfers and bandwidth ------------------------------------------------------------------ */

static void measure_transfers(const timing &t, size_t bytes, ecp_result *r)
{
    void *dev, *pinned, *pageable;
    CUDA_OK(cudaMalloc(&dev, bytes));
    CUDA_OK(cudaMallocHost(&pinned, bytes));
    pageable = std::malloc(bytes);
    if (pageable == NULL) {
        std::fprintf(stderr, "epochcast-probe: out of host memory\n");
        std::exit(1);
    }
    std::memset(pinned, 0x5a, bytes); /* touch every page before timing */
    std::memset(pageable, 0x5a, bytes);
    cudaStream_t s = 0;
    double b = (double)bytes;
    r->h2d_pinned_bytes_per_s = b / median_time_s(t, s, [&] { CUDA_OK(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s)); });
    r->d2h_pinned_bytes_per_s = b / median_time_s(t, s, [&] { CUDA_OK(cudaMemcpyAsync(pinned, dev, bytes, cudaMemcpyDeviceToHost, s)); });
    /* pageable copies are synchronous with respect to the host: events still bracket them */
    r->h2d_pageable_bytes_per_s = b / median_time_s(t, s, [&] { CUDA_OK(cudaMemcpy(dev, pageable, bytes, cudaMemcpyHostToDevice)); });
    r->d2h_pageable_bytes_per_s = b / median_time_s(t, s, [&] { CUDA_OK(cudaMemcpy(pageable, dev, bytes, cudaMemcpyDeviceToHost)); });
    CUDA_OK(cudaFree(dev));
    CUDA_OK(cudaFreeHost(pinned));
    std::free(pageable);
}

static void measure_device_bandwidth(const timing &t, size_t n, int sm_count, ecp_result *r)
{
    float *x, *y;
    CUDA_OK(cudaMalloc(&x, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&y, n * sizeof(float)));
    fill_random(x, n, 1u);
    fill_random(y, n, 2u);
    cudaStream_t s = 0;
    double bytes = (double)n * sizeof(float);
    /* a copy reads and writes every byte */
    r->d2d_copy_bytes_per_s = 2 * bytes / median_time_s(t, s, [&] { CUDA_OK(cudaMemcpyAsync(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice, s)); });
    int blocks = sm_count * 8;
    r->elementwise_bytes_per_s = 3 * bytes / median_time_s(t, s, [&] {
        axpy_kernel<<<blocks, 256, 0, s>>>(1.0001f, x, y, n);
    });
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaFree(x));
    CUDA_OK(cudaFree(y));
}

static void measure_launch(const timing &t, ecp_result *r)
{
    const int launches = 2000;
    cudaStream_t s = 0;
    /* GPU side: back-to-back empty kernels, event time per kernel */
    double gpu_s = median_time_s(t, s, [&] {
        for (int i = 0; i < launches; i++)
            empty_kernel<<<1, 1, 0, s>>>();
    });
    r->kernel_floor_s = gpu_s / launches;
    /* host side: wall time of the launch calls alone */
    std::vector<double> host;
    for (int rep = 0; rep < t.repeats; rep++) {
        CUDA_OK(cudaStreamSynchronize(s));
        auto a = std::chrono::steady_clock::now();
        for (int i = 0; i < launches; i++)
            empty_kernel<<<1, 1, 0, s>>>();
        auto b = std::chrono::steady_clock::now();
        host.push_back(std::chrono::duration<double>(b - a).count() / launches);
    }
    CUDA_OK(cudaStreamSynchronize(s));
    std::sort(host.begin(), host.end());
    r->launch_host_s = host[host.size() / 2];
}

static void measure_p2p(const timing &t, int device, size_t bytes, ecp_result *r)
{
    int n = 0;
    CUDA_OK(cudaGetDeviceCount(&n));
    r->n_gpus = n;
    if (n < 2)
        return;
    int peer = device == 0 ? 1 : 0, can = 0;
    CUDA_OK(cudaDeviceCanAccessPeer(&can, device, peer));
    if (can) {
        cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
            can = 0;
        (void)cudaGetLastError();
    }
    void *src, *dst;
    CUDA_OK(cudaMalloc(&src, bytes));
    CUDA_OK(cudaSetDevice(peer));
    CUDA_OK(cudaMalloc(&dst, bytes));
    CUDA_OK(cudaSetDevice(device));
    /* without peer access the runtime stages through the host: still what a copy costs */
    r->p2p_bytes_per_s = (double)bytes / median_time_s(t, 0, [&] { CUDA_OK(cudaMemcpyPeerAsync(dst, peer, src, device, bytes, 0)); });
    if (!can)
        std::fprintf(stderr, "epochcast-probe: no peer access %d -> %d: P2P figure is host-staged\n", device, peer);
    CUDA_OK(cudaFree(src));
    CUDA_OK(cudaSetDevice(peer));
    CUDA_OK(cudaFree(dst));
    CUDA_OK(cudaSetDevice(device));
}

/* ---- GEMM ------------------------------------------------------------------------------- */

struct precision_desc {
    const char *name;
    cudaDataType_t type;
    cublasComputeType_t compute;
    size_t elem_bytes;
    double min_cc; /* first compute capability with the unit */
};

static const precision_desc precision_list[] = {
    {"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 0.0},
    {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 8.0},
    {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 7.0},  /* fp32 accumulate, as autocast */
    {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 8.0},
};

static void fill_typed(void *p, size_t n, cudaDataType_t type, unsigned seed)
{
    if (type == CUDA_R_32F)
        fill_random((float *)p, n, seed);
    else if (type == CUDA_R_16F)
        fill_random((__half *)p, n, seed);
    else
        fill_random((__nv_bfloat16 *)p, n, seed);
}

static void measure_gemms(const timing &t, double cc, bool quick, std::vector<ecp_gemm_point> &out)
{
    /* Square sizes for the fall-off curve, and the transformer / ResNet shapes the model
     * prices most (tokens x hidden x hidden, the FFN, a conv as implicit GEMM). */
    std::vector<int> sizes = quick ? std::vector<int>{512, 4096} : std::vector<int>{256, 512, 1024, 2048, 4096, 8192};
    struct shape { int m, n, k; };
    std::vector<shape> shapes;
    for (int s : sizes)
        shapes.push_back({s, s, s});
    if (!quick) {
        shapes.push_back({4096, 768, 768});    /* BERT-base, 8 x 512 tokens: attention projections */
        shapes.push_back({4096, 3072, 768});   /* BERT-base FFN up */
        shapes.push_back({16384, 4096, 1024}); /* BERT-large FFN up, 32 x 512 tokens */
        shapes.push_back({200704, 64, 576});   /* ResNet-50 3x3 conv, 64 x 56 x 56 pixels */
    }
    size_t max_elems = 0;
    for (const shape &s : shapes)
        max_elems = std::max({max_elems, (size_t)s.m * s.k, (size_t)s.k * s.n, (size_t)s.m * s.n});
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    void *ws; /* PyTorch gives cuBLAS a workspace too */
    size_t ws_bytes = 32u << 20;
    CUDA_OK(cudaMalloc(&ws, ws_bytes));
    CUBLAS_OK(cublasSetWorkspace(h, ws, ws_bytes));
    for (const precision_desc &p : precision_list) {
        if (cc < p.min_cc)
            continue; /* the unit does not exist: gpus.csv has 0 for it */
        void *a, *b, *c;
        CUDA_OK(cudaMalloc(&a, max_elems * p.elem_bytes));
        CUDA_OK(cudaMalloc(&b, max_elems * p.elem_bytes));
        CUDA_OK(cudaMalloc(&c, max_elems * p.elem_bytes));
        fill_typed(a, max_elems, p.type, 11u);
        fill_typed(b, max_elems, p.type, 12u);
        fill_typed(c, max_elems, p.type, 13u);
        for (const shape &s : shapes) {
            const float alpha = 1.0f, beta = 0.0f;
            double sec = median_time_s(t, 0, [&] {
                /* column-major C (m x n) = A (m x k) B (k x n) */
                CUBLAS_OK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s.m, s.n, s.k, &alpha, a, p.type, s.m, b, p.type,
                                       s.k, &beta, c, p.type, s.m, p.compute, CUBLAS_GEMM_DEFAULT));
            });
            out.push_back({s.m, s.n, s.k, p.name, 2.0 * s.m * s.n * (double)s.k / sec});
            std::fprintf(stderr, "  gemm %-4s %6d x %5d x %5d  %8.2f TFLOP/s\n", p.name, s.m, s.n, s.k,
                         out.back().flop_per_s / 1e12);
        }
        CUDA_OK(cudaFree(a));
        CUDA_OK(cudaFree(b));
        CUDA_OK(cudaFree(c));
    }
    CUDA_OK(cudaFree(ws));
    CUBLAS_OK(cublasDestroy(h));
}

/* ---- main ------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *out_dir = ".", *models = NULL;
    int device = 0;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
            std::fputs(usage, stdout);
            return 0;
        } else if ((std::strcmp(a, "-o") == 0 || std::strcmp(a, "--models") == 0 || std::strcmp(a, "--device") == 0) &&
                   i + 1 < argc) {
            if (a[1] == 'o')
                out_dir = argv[++i];
            else if (a[2] == 'm')
                models = argv[++i];
            else
                device = std::atoi(argv[++i]);
        } else if (std::strcmp(a, "--quick") == 0) {
            quick = true;
        } else {
            std::fprintf(stderr, "epochcast-probe: unknown or incomplete argument '%s'\n%s", a, usage);
            return 2;
        }
    }
    if (models == NULL)
        models = std::getenv("EPOCHCAST_MODELS") ? std::getenv("EPOCHCAST_MODELS") : EC_MODELS_DIR;

    CUDA_OK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, device));
    ecp_result r;
    std::memset(&r, 0, sizeof r);
    std::snprintf(r.name, sizeof r.name, "%s", prop.name);
    r.compute_capability = prop.major + prop.minor / 10.0;
    r.sm_count = prop.multiProcessorCount;
    r.memory_bytes = (double)prop.totalGlobalMem;
    r.l2_bytes = (double)prop.l2CacheSize;
    std::fprintf(stderr, "epochcast-probe: %s (compute capability %.1f, %d SMs)\n", r.name, r.compute_capability,
                 r.sm_count);

    timing t = quick ? timing{2, 5} : timing{5, 21};
    measure_transfers(t, quick ? (16u << 20) : (256u << 20), &r);
    measure_device_bandwidth(t, quick ? (16u << 20) : (128u << 20), r.sm_count, &r); /* 4 x L2 at least */
    measure_launch(t, &r);
    measure_p2p(t, device, quick ? (16u << 20) : (256u << 20), &r);
    std::vector<ecp_gemm_point> gemm;
    measure_gemms(t, r.compute_capability, quick, gemm);
    r.gemm = gemm.data();
    r.n_gemm = gemm.size();
    std::fprintf(stderr,
                 "  h2d pinned %.2f GB/s, pageable %.2f GB/s; device copy %.0f GB/s, elementwise %.0f GB/s;\n"
                 "  launch %.2f us (host), %.2f us (GPU floor)\n",
                 r.h2d_pinned_bytes_per_s / 1e9, r.h2d_pageable_bytes_per_s / 1e9, r.d2d_copy_bytes_per_s / 1e9,
                 r.elementwise_bytes_per_s / 1e9, r.launch_host_s * 1e6, r.kernel_floor_s * 1e6);

    ec_ctx *ctx = NULL;
    char gpus_csv[4096];
    std::snprintf(gpus_csv, sizeof gpus_csv, "%s/gpus.csv", models);
    if (ec_ctx_new(NULL, NULL, &ctx) != EC_OK || ec_ctx_load_models(ctx, models) != EC_OK ||
        ecp_write(ctx, &r, gpus_csv, out_dir) != EC_OK) {
        std::fprintf(stderr, "epochcast-probe: %s\n", ctx ? ec_ctx_errmsg(ctx) : "out of memory");
        ec_ctx_free(ctx);
        return 1;
    }
    ec_ctx_free(ctx);
    std::fprintf(stderr, "epochcast-probe: wrote %s/gpu_profile.csv, gemm_curve.csv, probe_measurements.csv\n",
                 out_dir);
    return 0;
}
