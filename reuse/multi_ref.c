/* multi_ref.c - CPU twin of reuse/multi.cu (placeholder). */
#include "reuse.h"

size_t vr_multi_temp_bytes(const vr_reuse_params *p)
{
    (void)p;
    return 0;
}

vr_status vr_multi_ref(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "multi: not implemented yet");
}
