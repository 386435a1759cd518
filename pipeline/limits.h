/* limits.h - every limit and default a user can meet, defined once. The command line validates
 * its options against these, the simulator checks its configuration with them, the CPU twins and
 * the GPU batchers refuse parameters outside them and size their shared memory by them, so a
 * value the command line accepts is one every stage accepts.
 */
#ifndef VR_LIMITS_H
#define VR_LIMITS_H

/* Dynamic batches (hash, phash, sort; the simulator's dyn): N_u, the most distinct vertices per
 * batch. A triangle needs 3; shared memory holds N_u shaded vertices plus a 2 x N_u hash table. */
#define VR_NU_DEFAULT 256u /* the paper's N_u */
#define VR_NU_MIN 3u
#define VR_NU_MAX 1024u

/* Dynamic batches: the most indices per batch, a multiple of 3 (whole triangles). Shared memory
 * holds one 2-byte map entry per index (plus N_u shaded vertices, ids and the hash table), so at
 * the worst case, N_u 1024, a batch of 3069 takes 46 KiB: under the 48 KiB every kernel gets
 * without an opt-in, at any block size. sort also needs ceil(max_indices / block) <= 32. */
#define VR_MAX_INDICES_DEFAULT 1023u /* 341 whole triangles */
#define VR_MAX_INDICES_MIN 3u
#define VR_MAX_INDICES_MAX 3069u

/* Static warp batches (warp voting): indices per batch, a multiple of 3. The inverse map holds
 * one byte per index per warp in shared memory: 32 warps x 1536 bytes = 48 KiB. */
#define VR_WARP_BATCH_DEFAULT 96u /* 3 x warp size */
#define VR_WARP_BATCH_MIN 3u
#define VR_WARP_BATCH_MAX 1536u

/* Threads per block of the GPU batchers: whole warps. */
#define VR_BLOCK_DEFAULT 256u
#define VR_BLOCK_MIN 32u
#define VR_BLOCK_MAX 1024u

/* Occupancy-aware batch limits (--limits auto, reuse/limits_auto.c): the GPU they are chosen
 * for. A CPU command reproduces a GPU's batches exactly from the same SM count (--sms). The
 * defaults are the H100 SXM's: 132 SMs, at most 2048 resident threads and 32 resident blocks
 * per SM (the same on every data-centre GPU since Volta). */
#define VR_SMS_DEFAULT 132u
#define VR_SMS_MIN 1u
#define VR_SMS_MAX 4096u
#define VR_SM_THREADS_DEFAULT 2048u
#define VR_SM_BLOCKS_DEFAULT 32u
/* Auto limits aim at VR_AUTO_WAVES full waves of paper-sized blocks (block 256: 8 resident per
 * SM at 2048 threads), and never go below N_u = VR_AUTO_NU_MIN (dynamic batches and plans, 255
 * indices: reuse stays within 4% of the paper's and above warp voting's) or blocks of
 * VR_AUTO_BLOCK_MIN threads (naive, warp, multi). */
#define VR_AUTO_WAVES 2u
#define VR_AUTO_NU_MIN 64u
#define VR_AUTO_BLOCK_MIN 64u

/* Synthetic shader load: dependent FMA steps per vertex invocation. 2^24 steps is about 4000x
 * the heavy load; a CPU twin at that load needs seconds per thousand vertices. */
#define VR_LOAD_MAX 16777216u

/* Timed repetitions of a benchmark or frame loop. */
#define VR_REPS_MAX 100000u

/* `vreuse dice`: the volume is N x N x N voxels, N slices of N x N pixels each. 2048 keeps a
 * cell coordinate within 11 bits and a slice's HistoPyramid (4M cells) small. */
#define VR_DICE_VOLUME_DEFAULT 256u /* the paper's Dicer volume */
#define VR_DICE_VOLUME_MIN 8u
#define VR_DICE_VOLUME_MAX 2048u

#endif
