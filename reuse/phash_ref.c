/* phash_ref.c - CPU twin of reuse/phash.cu (placeholder). */
#include "reuse.h"

size_t vr_phash_temp_bytes(const vr_reuse_params *p)
{
    (void)p;
    return 0;
}

vr_status vr_phash_ref(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "phash: not implemented yet");
}
