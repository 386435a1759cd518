/* sort_ref.c - CPU twin of reuse/sort.cu (placeholder). */
#include "reuse.h"

size_t vr_sort_temp_bytes(const vr_reuse_params *p)
{
    (void)p;
    return 0;
}

vr_status vr_sort_ref(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "sort: not implemented yet");
}
