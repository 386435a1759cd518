/* hash_ref.c - CPU twin of reuse/hash.cu (placeholder). */
#include "reuse.h"

size_t vr_hash_temp_bytes(const vr_reuse_params *p)
{
    (void)p;
    return 0;
}

vr_status vr_hash_ref(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "hash: not implemented yet");
}
