/* hash_ref.c - CPU twin of reuse/hash.cu. The three dynamic strategies (hash, phash, sort) find
 * the same distinct vertices per batch, so they share one plain loop, vr_dyn_ref in
 * reuse/dyn_ref_common.h: per batch, list the distinct vertices, shade each once, emit every
 * triangle. Try: `vreuse_tests reuse/dyn`.
 */
#include "reuse/dyn_ref_common.h"

vr_status vr_hash_ref(const vr_reuse_params *p) { return vr_dyn_ref(p, "hash"); }
