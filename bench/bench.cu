/* bench.cu - the one measurement `vreuse bench` needs beyond pipeline/geometry.h: how many SM
 * clock cycles one vertex-shader invocation costs for a given synthetic load, read with clock64
 * around vr_shade in a single warp (latency, not throughput), for the cycles_per_invocation
 * column and the comparison with the paper's 256/512/1024-cycle loads.
 * Try: `vreuse bench sphere:1M --load simple,heavy`.
 */
#include <cuda_runtime.h>

#include "pipeline/vr_check.h"
#include "pipeline/vreuse.h"
#include "reuse/shaders.h"

#define VR_CYCLE_LANES 32
#define VR_CYCLE_ROUNDS 3 /* round 0 warms the instruction cache; the later ones are kept */

/* One warp; lane l shades a synthetic vertex VR_CYCLE_ROUNDS times and records the clock64
 * difference of each round in cycles[round * 32 + l]. The empty volatile asm consumes the
 * shader's outputs before the second clock read, so the chain cannot sink past it; `sink`
 * keeps the outputs alive. No shared memory, no sync. */
static __global__ void vr_cycles_kernel(vr_shader shader, long long *cycles, float *sink)
{
    const int lane = threadIdx.x;
    float pos[3] = {0.25f * lane, 1.0f - 0.01f * lane, 0.5f};
    float nrm[3] = {0.0f, 0.0f, 1.0f};
    float acc = 0.0f;
    for (int round = 0; round < VR_CYCLE_ROUNDS; ++round) {
        pos[2] += acc * 1e-30f; /* a new input per round: nothing to hoist out of the loop */
        const long long t0 = clock64();
        vr_shaded s;
        vr_shade(&shader, pos, nrm, &s);
        const float out = s.clip[0] + s.clip[1] + s.clip[2] + s.clip[3] + s.normal[0] +
                          s.normal[1] + s.normal[2];
        asm volatile("" : : "f"(out));
        const long long t1 = clock64();
        acc += out;
        cycles[round * VR_CYCLE_LANES + lane] = t1 - t0;
    }
    sink[lane] = acc;
}

/* Mean cycles per invocation of `shader` (loop_iterations included) over the warm rounds. */
extern "C" vr_status vr_bench_shader_cycles(const vr_shader *shader, double *cycles)
{
    *cycles = 0;
    vr_status st = VR_OK;
    long long *d_cycles = NULL, h_cycles[VR_CYCLE_ROUNDS * VR_CYCLE_LANES];
    float *d_sink = NULL;
    double sum = 0;
    if ((st = vr_cuda_alloc((void **)&d_cycles, sizeof h_cycles, "cycle counts")) ||
        (st = vr_cuda_alloc((void **)&d_sink, VR_CYCLE_LANES * sizeof(float), "shader sink")))
        goto done;
    vr_cycles_kernel<<<1, VR_CYCLE_LANES>>>(*shader, d_cycles, d_sink);
    VR_LAUNCH_GOTO("vr_cycles_kernel", 0);
    VR_CUDA_GOTO(cudaMemcpy(h_cycles, d_cycles, sizeof h_cycles, cudaMemcpyDeviceToHost));
    for (int i = VR_CYCLE_LANES; i < VR_CYCLE_ROUNDS * VR_CYCLE_LANES; ++i)
        sum += (double)h_cycles[i];
    *cycles = sum / ((VR_CYCLE_ROUNDS - 1) * VR_CYCLE_LANES);
done:
    /* teardown: nothing to act on if these fail, the first error is already recorded */
    cudaFree(d_cycles);
    cudaFree(d_sink);
    return st;
}
