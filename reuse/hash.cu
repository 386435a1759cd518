/* hash.cu - GPU batcher (placeholder); CPU twin: hash_ref.c. */
#include "reuse.h"

extern "C" vr_status vr_hash_run(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "hash: GPU path not implemented yet");
}
