/* warp_ref.c - CPU twin of reuse/warp.cu (placeholder). */
#include "reuse.h"

size_t vr_warp_temp_bytes(const vr_reuse_params *p)
{
    (void)p;
    return 0;
}

vr_status vr_warp_ref(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "warp: not implemented yet");
}
