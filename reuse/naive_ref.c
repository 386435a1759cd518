/* naive_ref.c - CPU twin of reuse/naive.cu (placeholder). */
#include "reuse.h"

size_t vr_naive_temp_bytes(const vr_reuse_params *p)
{
    (void)p;
    return 0;
}

vr_status vr_naive_ref(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "naive: not implemented yet");
}
