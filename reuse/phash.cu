/* phash.cu - GPU batcher (placeholder); CPU twin: phash_ref.c. */
#include "reuse.h"

extern "C" vr_status vr_phash_run(const vr_reuse_params *p)
{
    (void)p;
    return VR_ERROR(VR_ERR_ARG, "phash: GPU path not implemented yet");
}
