/* block_scan.cuh - an exclusive block-wide scan of one 32-bit value per thread for blocks whose
 * size is only known at run time (any multiple of 32 up to 1024), where cub::BlockScan needs it
 * at compile time: warp scans by shuffle, then warp 0 scans the warp totals. Sum or max (max
 * with identity 0, for the GTS Q scan). Used by the dynamic batchers (reuse/dyn_common.cuh)
 * and the per-batch GTS decoder (pipeline/gts_batch.cuh).
 */
#ifndef VR_BLOCK_SCAN_CUH
#define VR_BLOCK_SCAN_CUH

#include <stdint.h>

#ifndef VR_WARP_SIZE
#define VR_WARP_SIZE 32
#endif
#ifndef VR_FULL_MASK
#define VR_FULL_MASK 0xffffffffu
#endif

typedef enum vr_scan_op { VR_SCAN_SUM = 0, VR_SCAN_MAX = 1 } vr_scan_op;

static __device__ __forceinline__ uint32_t vr_scan_apply(vr_scan_op op, uint32_t a, uint32_t b)
{
    return op == VR_SCAN_MAX ? max(a, b) : a + b;
}

/* Exclusive scan (identity 0) over the block; every thread must call it. It holds two
 * __syncthreads; s_warp (32 words) may be reused only after a further one. *total gets the
 * reduction of the whole block. */
static __device__ uint32_t vr_block_scan(uint32_t x, vr_scan_op op, uint32_t *s_warp,
                                         uint32_t *total)
{
    const uint32_t lane = threadIdx.x & (VR_WARP_SIZE - 1), warp = threadIdx.x / VR_WARP_SIZE;
    const uint32_t warps = blockDim.x / VR_WARP_SIZE;
    uint32_t incl = x;
    for (uint32_t d = 1; d < VR_WARP_SIZE; d <<= 1) {
        const uint32_t y = __shfl_up_sync(VR_FULL_MASK, incl, d);
        if (lane >= d)
            incl = vr_scan_apply(op, incl, y);
    }
    /* exclusive within the warp: the inclusive value of the lane before */
    uint32_t excl = __shfl_up_sync(VR_FULL_MASK, incl, 1);
    if (lane == 0)
        excl = 0;
    if (lane == VR_WARP_SIZE - 1)
        s_warp[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        uint32_t w = lane < warps ? s_warp[lane] : 0;
        for (uint32_t d = 1; d < VR_WARP_SIZE; d <<= 1) {
            const uint32_t y = __shfl_up_sync(VR_FULL_MASK, w, d);
            if (lane >= d)
                w = vr_scan_apply(op, w, y);
        }
        if (lane < warps)
            s_warp[lane] = w; /* inclusive prefix of warp totals */
    }
    __syncthreads();
    *total = s_warp[warps - 1];
    return warp ? vr_scan_apply(op, s_warp[warp - 1], excl) : excl;
}

#endif
