/* warp_ref.c - CPU twin of reuse/warp.cu: statically batched warp voting (Kenzel et al. 2018,
 * Sec. 3.3, Algorithm 1). The index buffer is cut into static batches of batch_indices indices;
 * one 32-lane "warp" works through its batch in rounds. A round reads 32-index chunks; each
 * index, in order, maps to the lane that already holds its vertex or takes the next free lane;
 * once all 32 lanes are taken, the first index without a lane ends the round's loading. The
 * round shades its filled lanes (also those of a trailing incomplete triangle, whose results are
 * dropped) and emits the whole triangles among the leading mapped indices; the next round
 * starts after them and carries nothing over.
 * Try: `vreuse_tests reuse/warp`, `vreuse bench --strategy warp`.
 */
#include "reuse/ref_common.h"

vr_status vr_warp_ref(const vr_reuse_params *p)
{
    vr_status st = vr_warp_validate(p);
    if (st != VR_OK)
        return st;
    const uint32_t batch = p->batch_indices;

    uint8_t map[VR_WARP_BATCH_MAX]; /* index position - round start -> lane */
    for (uint64_t begin = 0; begin < p->index_count; begin += batch) {
        uint64_t end = begin + batch < p->index_count ? begin + batch : p->index_count;
        uint64_t start = begin;
        while (start < end) {
            uint32_t lane_vertex[32], fill, done;
            /* loading: whole chunks while lanes are free, as the warp loads 32 indices at once */
            vr_ref_warp_round(p->indices, start, end, lane_vertex, map, &fill, &done);
            uint32_t triangles = done / 3;
            assert(triangles > 0); /* 32 lanes always hold one whole triangle */

            vr_shaded shaded[32];
            for (uint32_t lane = 0; lane < fill; ++lane)
                shaded[lane] = vr_ref_shade_vertex(p, lane_vertex[lane]);
            for (uint32_t t = 0; t < triangles; ++t) {
                const uint8_t *m = map + 3 * t;
                vr_ref_emit_triangle(p, (uint32_t)(start / 3) + t, &shaded[m[0]], &shaded[m[1]],
                                     &shaded[m[2]], lane_vertex[m[0]], lane_vertex[m[1]],
                                     lane_vertex[m[2]]);
            }
            start += 3 * (uint64_t)triangles;
        }
    }
    return VR_OK;
}
