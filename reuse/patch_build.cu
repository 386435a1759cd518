/* patch_build.cu - the GPU patch builder (issue 14): RXMesh's patching (Mahmoud's dissertation,
 * Sec. 4.3.3: seeded region growing + Lloyd refinement on the face adjacency) as data-parallel
 * rounds whose result does not depend on thread scheduling; its CPU twin is patch_build_ref.c
 * (the same plan bit for bit: `vreuse_tests gpu/gpupatch`). Try:
 * `vreuse sim bunny.obj --order random --patch-builder gpu` (prints its time).
 *
 * Design. Every step is either a sort (CUB radix sorts are deterministic) or a synchronous round
 * in which each face reads only the previous round's arrays and writes only its own entry, or a
 * reduction with an order-independent operator (min, max, +) through atomics:
 * - adjacency: one 64-bit key per edge (smaller, larger vertex), sorted with the slot; a face's
 *   neighbours are the other faces in its edges' runs (CSR through a count, a scan and a fill);
 *   vertex -> faces likewise from sorted (vertex, face) keys;
 * - components: lock-free union-find that always links the larger root under the smaller, so
 *   every root ends as its component's smallest face id, whatever order the links happen in;
 * - seeds: per component of n faces, ceil(n / target) faces evenly spaced in face-id rank
 *   (ranks from a sort of (component, face) keys); a patch's label is its seed's face id;
 * - growth: synchronous BFS rounds, an unassigned face takes the smallest label among its
 *   neighbours assigned before the round (double-buffered; min is order independent);
 * - Lloyd (VR_PBG_LLOYD updates): distance from the patch boundary in synchronous rounds, the new
 *   seed = max of the packed key (distance, ~face) per patch by atomicMax (ties: smallest face);
 *   from the second update on a patch over a limit also gets its face farthest from the old
 *   seed (max of (growth round, ~face)), RXMesh's seed addition;
 * - split: patches still over N_u or max_indices are regrown inside themselves from their seed
 *   and that farthest face, round after round until all fit (each round halves them about);
 * - plan: patches aim at a quarter of a batch (vr_patch_target) and are packed into batches over
 *   their adjacency by the CPU builder's vr_patches_pack (reuse/patch_pack.h), which reads
 *   patches only. So the device builds that patch graph: labels counted by a scan and numbered
 *   by smallest vertex (a sort; the packing does not depend on the numbering); each
 *   patch's distinct vertices from sorted (patch, vertex) keys; its neighbours in the order the
 *   packing's definition walks them (first mention by face, then adjacency slot) from sorted
 *   (patch, patch) keys with their slots - the stable radix sort leaves the smallest slot first
 *   - re-sorted by (patch, slot); the roots from a sort by lowest face. The host downloads about
 *   6 bytes per triangle and packs (one greedy pass: 7-50 ms per million triangles on the
 *   development machine, the smaller limits the slower, as they make more patches); faces are
 *   then sorted by (batch, face id) for tri_order.
 * The host reads one flag per round (growth and distance rounds: about the patch radius, 10-20);
 * that synchronization is the price of a fixed point without a grid-wide barrier.
 */
#include "reuse/patch_build.h"
#include "reuse/patch_pack.h"

#include <cub/cub.cuh>

#include <stdlib.h>
#include <string.h>

#include "pipeline/vr_check.h"

#define VR_PBG_BLOCK 256

static unsigned vr_pbg_grid(size_t n)
{
    return (unsigned)((n + VR_PBG_BLOCK - 1) / VR_PBG_BLOCK);
}

static int vr_pbg_bits(uint64_t x) /* bits needed to hold x */
{
    int b = 0;
    while (x) {
        ++b;
        x >>= 1;
    }
    return b;
}

/* Every device array of one build; sizes in the comments (F faces, V vertices). */
typedef struct vr_pbg_dev {
    uint32_t *idx;                 /* 3F corners */
    uint64_t *k0, *k1;             /* cap sort keys in / out */
    uint32_t *v0, *v1;             /* cap sort values in / out */
    uint32_t *pos_of;              /* cap: sorted position of each edge slot, later the patches'
                                      vertex lists */
    uint32_t cap;                  /* entries of k0 .. pos_of: 3F + 1, or more for the patch
                                      adjacency pairs of a mesh with many non-manifold edges */
    uint32_t *ff_cnt, *ff_off;     /* F + 1: neighbour counts, then CSR offsets */
    uint32_t *ff;                  /* ff_off[F] neighbours */
    uint8_t *open, *is_seed;       /* F */
    uint32_t *vbeg, *vend;         /* V: vertex v's faces are the low halves of vf[vbeg..vend) */
    uint64_t *vf;                  /* 3F sorted (vertex, face) keys */
    uint32_t *parent;              /* F: union-find, then component labels */
    uint32_t *cbeg, *cend;         /* F by component label: its range in the sorted faces */
    uint32_t *patch, *next, *region, *gdist, *dist, *dnext; /* F each */
    uint64_t *centre, *far;        /* F by label */
    uint32_t *count, *verts;       /* F by label */
    uint32_t *dense;               /* F + 1: label -> patch number (by smallest vertex; the scan
                                      that counts the labels leaves their count at F) */
    uint32_t *pfaces, *pverts, *batch_of; /* patches (+ 1) */
    uint32_t *pv_off, *pn_cnt, *pn_off;   /* patches + 1 */
    uint32_t *lowest, *roots;             /* patches */
    uint32_t *flag;                /* 2: changed flag, over count */
    void *temp;
    size_t temp_bytes;
} vr_pbg_dev;

/* ---- kernels: one thread per element named in the first comment line; no shared memory, no
 * block-level sync; each writes only its own entries or reduces with atomic min / max / add ---- */

/* edge slot s = 3 f + e: key (smaller, larger vertex), or `degenerate` (V << 32) for u == w */
__global__ void vr_pbg_edge_keys_kernel(const uint32_t *idx, uint32_t slots, uint64_t degenerate,
                                        uint64_t *keys, uint32_t *vals)
{
    const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= slots)
        return;
    const uint32_t f = s / 3, e = s % 3;
    const uint32_t u = idx[3 * f + e], w = idx[3 * f + (e + 1) % 3];
    keys[s] = u == w ? degenerate
                     : ((uint64_t)(u < w ? u : w) << 32) | (uint64_t)(u < w ? w : u);
    vals[s] = s;
}

/* sorted position i: remember where slot vals[i] went */
__global__ void vr_pbg_pos_kernel(const uint32_t *vals, uint32_t n, uint32_t *pos_of)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        pos_of[vals[i]] = i;
}

/* face f: walks the run of each of its edges in the sorted keys (other faces of the run are
 * neighbours); fill == 0 counts them and sets open[f], fill == 1 writes them at ff_off[f] */
__global__ void vr_pbg_ff_kernel(const uint64_t *keys, const uint32_t *vals,
                                 const uint32_t *pos_of, uint32_t faces, uint64_t degenerate,
                                 int fill, uint32_t *ff_cnt, uint8_t *open, const uint32_t *ff_off,
                                 uint32_t *ff)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    const uint32_t n = 3 * faces;
    uint32_t cnt = 0, out = fill ? ff_off[f] : 0;
    int is_open = 0;
    for (uint32_t e = 0; e < 3; ++e) {
        const uint32_t i = pos_of[3 * f + e];
        const uint64_t k = keys[i];
        if (k == degenerate) {
            is_open = 1;
            continue;
        }
        uint32_t lo = i, shared = 0;
        while (lo > 0 && keys[lo - 1] == k)
            --lo;
        for (uint32_t j = lo; j < n && keys[j] == k; ++j) {
            const uint32_t g = vals[j] / 3;
            if (g == f)
                continue;
            if (fill)
                ff[out++] = g;
            ++shared;
        }
        cnt += shared;
        is_open |= shared == 0;
    }
    if (!fill) {
        ff_cnt[f] = cnt;
        open[f] = (uint8_t)is_open;
    }
}

/* corner c = 3 f + k: key (vertex, face) */
__global__ void vr_pbg_corner_keys_kernel(const uint32_t *idx, uint32_t corners, uint64_t *keys)
{
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < corners)
        keys[c] = ((uint64_t)idx[c] << 32) | (c / 3);
}

/* sorted position i of (hi, lo) keys: where each hi value's run begins and ends */
__global__ void vr_pbg_runs_kernel(const uint64_t *keys, uint32_t n, uint32_t *beg, uint32_t *end)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t h = (uint32_t)(keys[i] >> 32);
    if (i == 0 || (uint32_t)(keys[i - 1] >> 32) != h)
        beg[h] = i;
    if (i + 1 == n || (uint32_t)(keys[i + 1] >> 32) != h)
        end[h] = i + 1;
}

__global__ void vr_pbg_iota_kernel(uint32_t *a, uint32_t n)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = i;
}

static __device__ uint32_t vr_pbg_find(volatile uint32_t *parent, uint32_t x)
{
    for (uint32_t p = parent[x]; p != x; p = parent[x])
        x = p;
    return x;
}

/* face f: unites f with each smaller neighbour; a root is only ever linked under a smaller
 * root (atomicCAS on its own entry), so the final roots are the components' smallest faces */
__global__ void vr_pbg_unite_kernel(const uint32_t *ff_off, const uint32_t *ff, uint32_t faces,
                                    uint32_t *parent)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    for (uint32_t j = ff_off[f]; j < ff_off[f + 1]; ++j) {
        uint32_t a = f, b = ff[j];
        if (b > a)
            continue;
        for (;;) {
            a = vr_pbg_find(parent, a);
            b = vr_pbg_find(parent, b);
            if (a == b)
                break;
            if (a < b) {
                const uint32_t t = a;
                a = b;
                b = t;
            }
            if (atomicCAS(&parent[a], a, b) == a)
                break;
        }
    }
}

/* face f: its component label, and the (label, face) key whose sort ranks faces per component */
__global__ void vr_pbg_label_kernel(uint32_t *parent, uint32_t faces, uint64_t *keys)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    const uint32_t r = vr_pbg_find(parent, f);
    keys[f] = ((uint64_t)r << 32) | f;
}

/* sorted position i of (component, face): a seed when vr_pbg_is_seed picks its rank */
__global__ void vr_pbg_seed_kernel(const uint64_t *keys, const uint32_t *cbeg,
                                   const uint32_t *cend, uint32_t faces, uint32_t target,
                                   uint32_t *patch, uint32_t *gdist)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= faces)
        return;
    const uint32_t c = (uint32_t)(keys[i] >> 32), f = (uint32_t)keys[i];
    const uint32_t n = cend[c] - cbeg[c], k = (n + target - 1) / target;
    patch[f] = vr_pbg_is_seed(i - cbeg[c], n, k) ? f : VR_PBG_NONE;
    gdist[f] = 0;
}

/* face f, one growth round: unassigned faces take the smallest label of a neighbour assigned
 * before the round (same region when region != NULL) */
__global__ void vr_pbg_grow_kernel(const uint32_t *ff_off, const uint32_t *ff, uint32_t faces,
                                   const uint32_t *region, const uint32_t *patch, uint32_t *next,
                                   uint32_t *gdist, uint32_t round, uint32_t *changed)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    const uint32_t p = patch[f];
    if (p != VR_PBG_NONE) {
        next[f] = p;
        return;
    }
    uint32_t m = VR_PBG_NONE;
    for (uint32_t j = ff_off[f]; j < ff_off[f + 1]; ++j) {
        const uint32_t g = ff[j], q = patch[g];
        if (q != VR_PBG_NONE && (!region || region[g] == region[f]) && q < m)
            m = q;
    }
    next[f] = m;
    if (m != VR_PBG_NONE) {
        gdist[f] = round;
        *changed = 1;
    }
}

/* face f: its patch's face count and farthest-grown face */
__global__ void vr_pbg_count_kernel(const uint32_t *patch, const uint32_t *gdist, uint32_t faces,
                                    uint32_t *count, unsigned long long *far)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    const uint32_t p = patch[f];
    atomicAdd(&count[p], 1u);
    atomicMax(&far[p], (unsigned long long)vr_pbg_key(gdist[f], f));
}

/* vertex v: one for each distinct label among its faces */
__global__ void vr_pbg_verts_kernel(const uint64_t *vf, const uint32_t *vbeg,
                                    const uint32_t *vend, const uint32_t *patch,
                                    uint32_t vertices, uint32_t *verts)
{
    const uint32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= vertices)
        return;
    for (uint32_t i = vbeg[v]; i < vend[v]; ++i) {
        const uint32_t p = patch[(uint32_t)vf[i]];
        uint32_t j = vbeg[v];
        while (j < i && patch[(uint32_t)vf[j]] != p)
            ++j;
        if (j == i)
            atomicAdd(&verts[p], 1u);
    }
}

/* label f (patch[f] == f): counts the patches over a limit */
__global__ void vr_pbg_over_kernel(const uint32_t *patch, const uint32_t *count,
                                   const uint32_t *verts, uint32_t faces, uint32_t max_faces,
                                   uint32_t max_unique, uint32_t *over)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < faces && patch[f] == f && vr_pbg_over(count[f], verts[f], max_faces, max_unique))
        atomicAdd(over, 1u);
}

/* face f: distance 0 on the patch boundary (open edge or a neighbour in another patch) */
__global__ void vr_pbg_boundary_kernel(const uint32_t *ff_off, const uint32_t *ff,
                                       const uint8_t *open, const uint32_t *patch, uint32_t faces,
                                       uint32_t *dist)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    int boundary = open[f];
    for (uint32_t j = ff_off[f]; j < ff_off[f + 1] && !boundary; ++j)
        boundary = patch[ff[j]] != patch[f];
    dist[f] = boundary ? 0 : VR_PBG_NONE;
}

/* face f, one distance round inside its patch */
__global__ void vr_pbg_dist_kernel(const uint32_t *ff_off, const uint32_t *ff,
                                   const uint32_t *patch, uint32_t faces, const uint32_t *dist,
                                   uint32_t *dnext, uint32_t *changed)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    const uint32_t d = dist[f];
    if (d != VR_PBG_NONE) {
        dnext[f] = d;
        return;
    }
    uint32_t m = VR_PBG_NONE;
    for (uint32_t j = ff_off[f]; j < ff_off[f + 1]; ++j) {
        const uint32_t g = ff[j];
        if (patch[g] == patch[f] && dist[g] < m)
            m = dist[g];
    }
    dnext[f] = m == VR_PBG_NONE ? VR_PBG_NONE : m + 1;
    if (m != VR_PBG_NONE)
        *changed = 1;
}

/* face f: its patch's centre candidate */
__global__ void vr_pbg_centre_kernel(const uint32_t *patch, const uint32_t *dist, uint32_t faces,
                                     unsigned long long *centre)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < faces && dist[f] != VR_PBG_NONE)
        atomicMax(&centre[patch[f]], (unsigned long long)vr_pbg_key(dist[f], f));
}

/* label p: marks its new seed(s); only faces of p are written */
__global__ void vr_pbg_reseed_kernel(const uint32_t *patch, const uint64_t *centre,
                                     const uint64_t *far, const uint32_t *count,
                                     const uint32_t *verts, uint32_t faces, int add_seeds,
                                     uint32_t max_faces, uint32_t max_unique, uint8_t *is_seed)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= faces || patch[p] != p)
        return;
    const uint32_t c = centre[p] ? vr_pbg_key_face(centre[p]) : p;
    is_seed[c] = 1;
    if (add_seeds && vr_pbg_over(count[p], verts[p], max_faces, max_unique) &&
        vr_pbg_key_face(far[p]) != c)
        is_seed[vr_pbg_key_face(far[p])] = 1;
}

/* face f: released, or the label of its own patch when it is a seed */
__global__ void vr_pbg_release_kernel(const uint8_t *is_seed, uint32_t faces, uint32_t *patch,
                                      uint32_t *gdist)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    patch[f] = is_seed[f] ? f : VR_PBG_NONE;
    gdist[f] = 0;
}

/* face f of a patch over a limit (region = labels before the round): released unless it is the
 * patch's seed or its farthest-grown face */
__global__ void vr_pbg_split_kernel(const uint32_t *region, const uint32_t *count,
                                    const uint32_t *verts, const uint64_t *far, uint32_t faces,
                                    uint32_t max_faces, uint32_t max_unique, uint32_t *patch,
                                    uint32_t *gdist)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    const uint32_t p = region[f];
    if (!vr_pbg_over(count[p], verts[p], max_faces, max_unique))
        return;
    const int seed = f == p || f == vr_pbg_key_face(far[p]);
    patch[f] = seed ? f : VR_PBG_NONE;
    if (seed)
        gdist[f] = 0;
}

/* face f (and the extra entry F): 1 when f is a label, for the scan that numbers patches */
__global__ void vr_pbg_is_label_kernel(const uint32_t *patch, uint32_t faces, uint32_t *flags)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f <= faces)
        flags[f] = f < faces && patch[f] == f;
}

/* label f: its sizes at its patch number */
__global__ void vr_pbg_gather_kernel(const uint32_t *patch, const uint32_t *dense,
                                     const uint32_t *count, const uint32_t *verts, uint32_t faces,
                                     uint32_t *pfaces, uint32_t *pverts)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < faces && patch[f] == f) {
        pfaces[dense[f]] = count[f];
        pverts[dense[f]] = verts[f];
    }
}

/* face f: the (batch, face) key whose sort is the plan order */
__global__ void vr_pbg_batch_keys_kernel(const uint32_t *patch, const uint32_t *dense,
                                         const uint32_t *batch_of, uint32_t faces, uint64_t *keys)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < faces)
        keys[f] = ((uint64_t)batch_of[dense[patch[f]]] << 32) | f;
}

__global__ void vr_pbg_low_kernel(const uint64_t *keys, uint32_t n, uint32_t *out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (uint32_t)keys[i];
}

/* corner c: the smallest vertex of each patch (by label; atomicMin: order independent) */
__global__ void vr_pbg_min_vertex_kernel(const uint32_t *idx, const uint32_t *patch,
                                         uint32_t corners, uint32_t *minv)
{
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < corners)
        atomicMin(&minv[patch[c / 3]], idx[c]);
}

/* face f: a label's key (smallest vertex, label), or `none` (V << 32) for the other faces */
__global__ void vr_pbg_label_keys_kernel(const uint32_t *patch, const uint32_t *minv,
                                         uint32_t faces, uint64_t none, uint64_t *keys)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < faces)
        keys[f] = patch[f] == f ? ((uint64_t)minv[f] << 32) | f : none;
}

/* rank i < P of the sorted label keys: the label's patch number */
__global__ void vr_pbg_rank_kernel(const uint64_t *keys, uint32_t patches, uint32_t *dense)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < patches)
        dense[(uint32_t)keys[i]] = i;
}

/* face f: its patch number */
__global__ void vr_pbg_face_patch_kernel(const uint32_t *patch, const uint32_t *dense,
                                         uint32_t faces, uint32_t *fp)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < faces)
        fp[f] = dense[patch[f]];
}

/* face f: lowest[p] = the smallest face of patch p (atomicMin: order independent) */
__global__ void vr_pbg_lowest_kernel(const uint32_t *fp, uint32_t faces, uint32_t *lowest)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f < faces)
        atomicMin(&lowest[fp[f]], f);
}

/* patch p: key = its lowest face, value = p, for the sort that lists the roots */
__global__ void vr_pbg_root_keys_kernel(const uint32_t *lowest, uint32_t patches, uint64_t *keys,
                                        uint32_t *vals)
{
    const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < patches) {
        keys[p] = lowest[p];
        vals[p] = p;
    }
}

/* corner c = 3 f + k: key (patch of f, vertex), whose sorted runs are the patches' vertices */
__global__ void vr_pbg_patch_vertex_keys_kernel(const uint32_t *idx, const uint32_t *fp,
                                                uint32_t corners, uint64_t *keys)
{
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < corners)
        keys[c] = ((uint64_t)fp[c / 3] << 32) | idx[c];
}

/* sorted position i (and the extra entry n): 1 at the first of each run of equal keys that is
 * not `none` */
__global__ void vr_pbg_run_heads_kernel(const uint64_t *keys, uint32_t n, uint64_t none,
                                        uint32_t *flags)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        flags[i] = i < n && keys[i] != none && (i == 0 || keys[i - 1] != keys[i]);
}

/* sorted position i: a run head's low half goes to its scanned position */
__global__ void vr_pbg_scatter_low_kernel(const uint64_t *keys, const uint32_t *flags,
                                          const uint32_t *pos, uint32_t n, uint32_t *out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && flags[i])
        out[pos[i]] = (uint32_t)keys[i];
}

/* face f: for each neighbour slot j (f's slots are consecutive and ascending in j), the key
 * (patch of f, patch of the neighbour) with value j, or `none` (P << 32) inside one patch */
__global__ void vr_pbg_pair_keys_kernel(const uint32_t *ff_off, const uint32_t *ff,
                                        const uint32_t *fp, uint32_t faces, uint64_t none,
                                        uint64_t *keys, uint32_t *vals)
{
    const uint32_t f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= faces)
        return;
    const uint32_t p = fp[f];
    for (uint32_t j = ff_off[f]; j < ff_off[f + 1]; ++j) {
        const uint32_t q = fp[ff[j]];
        keys[j] = q == p ? none : ((uint64_t)p << 32) | q;
        vals[j] = j;
    }
}

/* sorted position i of the (p, q) keys with their slots j: the stable sort leaves each run's
 * smallest j first, the first mention of q among p's faces. A head becomes key (p, j) with
 * value q and is counted for p; everything else becomes `none`, which sorts last. */
__global__ void vr_pbg_first_mention_kernel(const uint64_t *keys, const uint32_t *vals,
                                            uint32_t n, uint64_t none, uint64_t *keys_out,
                                            uint32_t *vals_out, uint32_t *count)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint64_t k = keys[i];
    if (k != none && (i == 0 || keys[i - 1] != k)) {
        const uint32_t p = (uint32_t)(k >> 32);
        keys_out[i] = ((uint64_t)p << 32) | vals[i];
        vals_out[i] = (uint32_t)k;
        atomicAdd(&count[p], 1u);
    } else {
        keys_out[i] = none;
        vals_out[i] = 0;
    }
}

/* ---- host driver -------------------------------------------------------------------------- */

#define VR_PBG_LAUNCH(kernel, n, ...)                                                   \
    do {                                                                                \
        kernel<<<vr_pbg_grid(n), VR_PBG_BLOCK, 0, s>>>(__VA_ARGS__);                    \
        VR_LAUNCH_GOTO(#kernel, s);                                                     \
    } while (0)

/* Repeats a round kernel until it reports no change (flag[0]); the host reads the flag. */
static vr_status vr_pbg_grow(vr_pbg_dev *d, uint32_t F, const uint32_t *region, cudaStream_t s)
{
    vr_status st = VR_OK;
    for (uint32_t round = 1;; ++round) {
        uint32_t changed = 0;
        VR_CUDA_GOTO(cudaMemsetAsync(d->flag, 0, 4, s));
        VR_PBG_LAUNCH(vr_pbg_grow_kernel, F, d->ff_off, d->ff, F, region, d->patch, d->next,
                      d->gdist, round, d->flag);
        VR_CUDA_GOTO(cudaMemcpyAsync(&changed, d->flag, 4, cudaMemcpyDeviceToHost, s));
        VR_CUDA_GOTO(cudaStreamSynchronize(s));
        uint32_t *t = d->patch;
        d->patch = d->next;
        d->next = t;
        if (!changed)
            break;
    }
done:
    return st;
}

static vr_status vr_pbg_measure(vr_pbg_dev *d, uint32_t F, uint32_t V, uint32_t max_faces,
                                uint32_t max_unique, uint32_t *over, cudaStream_t s)
{
    vr_status st = VR_OK;
    VR_CUDA_GOTO(cudaMemsetAsync(d->count, 0, (size_t)F * 4, s));
    VR_CUDA_GOTO(cudaMemsetAsync(d->verts, 0, (size_t)F * 4, s));
    VR_CUDA_GOTO(cudaMemsetAsync(d->far, 0, (size_t)F * 8, s));
    VR_CUDA_GOTO(cudaMemsetAsync(d->flag + 1, 0, 4, s));
    VR_PBG_LAUNCH(vr_pbg_count_kernel, F, d->patch, d->gdist, F, d->count,
                  (unsigned long long *)d->far);
    VR_PBG_LAUNCH(vr_pbg_verts_kernel, V, d->vf, d->vbeg, d->vend, d->patch, V, d->verts);
    VR_PBG_LAUNCH(vr_pbg_over_kernel, F, d->patch, d->count, d->verts, F, max_faces, max_unique,
                  d->flag + 1);
    VR_CUDA_GOTO(cudaMemcpyAsync(over, d->flag + 1, 4, cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaStreamSynchronize(s));
done:
    return st;
}

static vr_status vr_pbg_update(vr_pbg_dev *d, uint32_t F, int add_seeds, uint32_t max_faces,
                               uint32_t max_unique, cudaStream_t s)
{
    vr_status st = VR_OK;
    VR_PBG_LAUNCH(vr_pbg_boundary_kernel, F, d->ff_off, d->ff, d->open, d->patch, F, d->dist);
    for (;;) {
        uint32_t changed = 0;
        VR_CUDA_GOTO(cudaMemsetAsync(d->flag, 0, 4, s));
        VR_PBG_LAUNCH(vr_pbg_dist_kernel, F, d->ff_off, d->ff, d->patch, F, d->dist, d->dnext,
                      d->flag);
        VR_CUDA_GOTO(cudaMemcpyAsync(&changed, d->flag, 4, cudaMemcpyDeviceToHost, s));
        VR_CUDA_GOTO(cudaStreamSynchronize(s));
        uint32_t *t = d->dist;
        d->dist = d->dnext;
        d->dnext = t;
        if (!changed)
            break;
    }
    VR_CUDA_GOTO(cudaMemsetAsync(d->centre, 0, (size_t)F * 8, s));
    VR_CUDA_GOTO(cudaMemsetAsync(d->is_seed, 0, F, s));
    VR_PBG_LAUNCH(vr_pbg_centre_kernel, F, d->patch, d->dist, F,
                  (unsigned long long *)d->centre);
    VR_PBG_LAUNCH(vr_pbg_reseed_kernel, F, d->patch, d->centre, d->far, d->count, d->verts, F,
                  add_seeds, max_faces, max_unique, d->is_seed);
    VR_PBG_LAUNCH(vr_pbg_release_kernel, F, d->is_seed, F, d->patch, d->gdist);
done:
    return st;
}

static void vr_pbg_dev_free(vr_pbg_dev *d)
{
    void *const bufs[] = {d->idx,    d->k0,     d->k1,    d->v0,      d->v1,     d->pos_of,
                          d->ff_cnt, d->ff_off, d->ff,    d->open,    d->is_seed, d->vbeg,
                          d->vend,   d->vf,     d->parent, d->cbeg,   d->cend,   d->patch,
                          d->next,   d->region, d->gdist, d->dist,    d->dnext,  d->centre,
                          d->far,    d->count,  d->verts, d->dense,   d->pfaces, d->pverts,
                          d->batch_of, d->pv_off, d->pn_cnt, d->pn_off, d->lowest, d->roots,
                          d->flag,   d->temp};
    vr_cuda_free_all(bufs, VR_COUNT_OF(bufs));
}

/* The sort arrays (k0, k1, v0, v1, pos_of) for n entries and the CUB workspace for every sort
 * and scan of up to n entries; they only grow (the old contents are dropped). */
static vr_status vr_pbg_reserve(vr_pbg_dev *d, uint32_t n)
{
    if (n <= d->cap && d->temp)
        return VR_OK;
    void *const old[] = {d->k0, d->k1, d->v0, d->v1, d->pos_of, d->temp};
    vr_cuda_free_all(old, VR_COUNT_OF(old));
    d->k0 = d->k1 = NULL;
    d->v0 = d->v1 = d->pos_of = NULL;
    d->temp = NULL;
    d->cap = 0;
    vr_status st;
    if ((st = vr_cuda_alloc((void **)&d->k0, (size_t)n * 8, "gpu patches: sort keys")) != VR_OK ||
        (st = vr_cuda_alloc((void **)&d->k1, (size_t)n * 8, "gpu patches: sort keys")) != VR_OK ||
        (st = vr_cuda_alloc((void **)&d->v0, (size_t)n * 4, "gpu patches: sort values")) !=
            VR_OK ||
        (st = vr_cuda_alloc((void **)&d->v1, (size_t)n * 4, "gpu patches: sort values")) !=
            VR_OK ||
        (st = vr_cuda_alloc((void **)&d->pos_of, (size_t)n * 4, "gpu patches: positions")) !=
            VR_OK)
        return st;
    size_t a = 0, b = 0, c = 0;
    VR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, a, d->k0, d->k1, d->v0, d->v1, (int)n));
    VR_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(NULL, b, d->k0, d->k1, (int)n));
    VR_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, c, d->v0, d->v1, (int)n));
    d->temp_bytes = a > b ? a : b;
    if (c > d->temp_bytes)
        d->temp_bytes = c;
    if ((st = vr_cuda_alloc(&d->temp, d->temp_bytes, "gpu patches: CUB workspace")) != VR_OK)
        return st;
    d->cap = n;
    return VR_OK;
}

vr_status vr_patches_build_gpu(vr_batch_plan *out, const uint32_t *indices, uint32_t index_count,
                               uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices,
                               float *ms)
{
    if (ms)
        *ms = 0;
    vr_status st = vr_batch_plan_begin(out, index_count, max_unique, max_indices, "gpu patches");
    if (st != VR_OK || index_count == 0)
        return st;
    if ((st = vr_cuda_device_check()) != VR_OK)
        return st;
    const uint32_t F = index_count / 3, V = vertex_count, n3 = index_count;
    const uint32_t max_faces = max_indices / 3;
    if (F > INT32_MAX / 3)
        return VR_ERROR(VR_ERR_OVERFLOW, "gpu patches: %u triangles, at most %d", F,
                        INT32_MAX / 3);
    vr_pbg_dev d;
    memset(&d, 0, sizeof d);
    cudaStream_t s = NULL;
    cudaEvent_t ev[2] = {NULL, NULL};
    uint32_t *h_batch = NULL;
    uint32_t P = 0, over = 0, edges = 0, pv_heads = 0, pv_total = 0, pn_total = 0, batches = 0;
    vr_patch_graph g;
    memset(&g, 0, sizeof g);
    const uint64_t degenerate = (uint64_t)V << 32;
    const int vbits = 32 + vr_pbg_bits(V), fbits = 32 + vr_pbg_bits(F);
    VR_CUDA_GOTO(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    VR_CUDA_GOTO(cudaEventCreate(&ev[0]));
    VR_CUDA_GOTO(cudaEventCreate(&ev[1]));
    {
        struct {
            void **p;
            size_t bytes;
        } a[] = {
            {(void **)&d.idx, (size_t)n3 * 4},
            {(void **)&d.ff_cnt, ((size_t)F + 1) * 4}, {(void **)&d.ff_off, ((size_t)F + 1) * 4},
            {(void **)&d.open, (size_t)F},          {(void **)&d.is_seed, (size_t)F},
            {(void **)&d.vbeg, (size_t)V * 4},      {(void **)&d.vend, (size_t)V * 4},
            {(void **)&d.vf, (size_t)n3 * 8},       {(void **)&d.parent, (size_t)F * 4},
            {(void **)&d.cbeg, (size_t)F * 4},      {(void **)&d.cend, (size_t)F * 4},
            {(void **)&d.patch, (size_t)F * 4},     {(void **)&d.next, (size_t)F * 4},
            {(void **)&d.region, (size_t)F * 4},    {(void **)&d.gdist, (size_t)F * 4},
            {(void **)&d.dist, (size_t)F * 4},      {(void **)&d.dnext, (size_t)F * 4},
            {(void **)&d.centre, (size_t)F * 8},    {(void **)&d.far, (size_t)F * 8},
            {(void **)&d.count, (size_t)F * 4},     {(void **)&d.verts, (size_t)F * 4},
            {(void **)&d.dense, ((size_t)F + 1) * 4}, {(void **)&d.flag, 8},
        };
        for (size_t k = 0; k < VR_COUNT_OF(a) && st == VR_OK; ++k)
            st = vr_cuda_alloc(a[k].p, a[k].bytes, "gpu patches: build arrays");
        if (st != VR_OK)
            goto done;
    }
    if ((st = vr_pbg_reserve(&d, n3 + 1)) != VR_OK)
        goto done;

    /* timed from here: upload, every kernel and flag read-back, host packing, plan download */
    VR_CUDA_GOTO(cudaEventRecord(ev[0], s));
    VR_CUDA_GOTO(cudaMemcpyAsync(d.idx, indices, (size_t)n3 * 4, cudaMemcpyHostToDevice, s));

    /* adjacency: edge keys sorted with their slots, neighbours counted, scanned, filled */
    VR_PBG_LAUNCH(vr_pbg_edge_keys_kernel, n3, d.idx, n3, degenerate, d.k0, d.v0);
    VR_CUDA_GOTO(cub::DeviceRadixSort::SortPairs(d.temp, d.temp_bytes, d.k0, d.k1, d.v0, d.v1,
                                                 (int)n3, 0, vbits, s));
    VR_PBG_LAUNCH(vr_pbg_pos_kernel, n3, d.v1, n3, d.pos_of);
    VR_PBG_LAUNCH(vr_pbg_ff_kernel, F, d.k1, d.v1, d.pos_of, F, degenerate, 0, d.ff_cnt, d.open,
                  d.ff_off, d.ff);
    VR_CUDA_GOTO(cudaMemsetAsync(d.ff_cnt + F, 0, 4, s));
    VR_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(d.temp, d.temp_bytes, d.ff_cnt, d.ff_off,
                                               (int)F + 1, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(&edges, d.ff_off + F, 4, cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaStreamSynchronize(s));
    if (edges >= (uint32_t)INT32_MAX) { /* CUB counts in int */
        st = VR_ERROR(VR_ERR_OVERFLOW, "gpu patches: %u face adjacencies, at most %d", edges,
                      INT32_MAX - 1);
        goto done;
    }
    if ((st = vr_cuda_alloc((void **)&d.ff, (size_t)edges * 4, "gpu patches: adjacency")) !=
        VR_OK)
        goto done;
    VR_PBG_LAUNCH(vr_pbg_ff_kernel, F, d.k1, d.v1, d.pos_of, F, degenerate, 1, d.ff_cnt, d.open,
                  d.ff_off, d.ff);
    /* vertex -> faces */
    VR_PBG_LAUNCH(vr_pbg_corner_keys_kernel, n3, d.idx, n3, d.k0);
    VR_CUDA_GOTO(cub::DeviceRadixSort::SortKeys(d.temp, d.temp_bytes, d.k0, d.vf, (int)n3, 0,
                                                vbits, s));
    VR_CUDA_GOTO(cudaMemsetAsync(d.vbeg, 0, (size_t)V * 4, s));
    VR_CUDA_GOTO(cudaMemsetAsync(d.vend, 0, (size_t)V * 4, s));
    VR_PBG_LAUNCH(vr_pbg_runs_kernel, n3, d.vf, n3, d.vbeg, d.vend);
    /* components, ranks, seeds, first growth */
    VR_PBG_LAUNCH(vr_pbg_iota_kernel, F, d.parent, F);
    VR_PBG_LAUNCH(vr_pbg_unite_kernel, F, d.ff_off, d.ff, F, d.parent);
    VR_PBG_LAUNCH(vr_pbg_label_kernel, F, d.parent, F, d.k0);
    VR_CUDA_GOTO(cub::DeviceRadixSort::SortKeys(d.temp, d.temp_bytes, d.k0, d.k1, (int)F, 0,
                                                fbits, s));
    VR_PBG_LAUNCH(vr_pbg_runs_kernel, F, d.k1, F, d.cbeg, d.cend);
    VR_PBG_LAUNCH(vr_pbg_seed_kernel, F, d.k1, d.cbeg, d.cend, F,
                  vr_patch_target(max_unique, max_faces), d.patch, d.gdist);
    if ((st = vr_pbg_grow(&d, F, NULL, s)) != VR_OK ||
        (st = vr_pbg_measure(&d, F, V, max_faces, max_unique, &over, s)) != VR_OK)
        goto done;
    /* Lloyd */
    for (int u = 0; u < VR_PBG_LLOYD; ++u)
        if ((st = vr_pbg_update(&d, F, u >= 1 && over > 0, max_faces, max_unique, s)) != VR_OK ||
            (st = vr_pbg_grow(&d, F, NULL, s)) != VR_OK ||
            (st = vr_pbg_measure(&d, F, V, max_faces, max_unique, &over, s)) != VR_OK)
            goto done;
    out->iterations = 1 + VR_PBG_LLOYD;
    /* split what is still over a limit */
    for (uint32_t round = 0; over > 0; ++round) {
        if (round == VR_PBG_SPLIT_ROUNDS_MAX) {
            st = VR_ERROR(VR_ERR_FORMAT, "gpu patches: %u patches still over a limit after %u "
                          "split rounds", over, round);
            goto done;
        }
        out->split += over;
        VR_CUDA_GOTO(cudaMemcpyAsync(d.region, d.patch, (size_t)F * 4, cudaMemcpyDeviceToDevice,
                                     s));
        VR_PBG_LAUNCH(vr_pbg_split_kernel, F, d.region, d.count, d.verts, d.far, F, max_faces,
                      max_unique, d.patch, d.gdist);
        if ((st = vr_pbg_grow(&d, F, d.region, s)) != VR_OK ||
            (st = vr_pbg_measure(&d, F, V, max_faces, max_unique, &over, s)) != VR_OK)
            goto done;
    }
    /* the patch graph for the shared packing (reuse/patch_pack.h): patch count by a scan, patch
     * numbers, each face's patch (fp, in `region`), sizes, roots, vertex and neighbour lists */
    VR_PBG_LAUNCH(vr_pbg_is_label_kernel, F + 1, d.patch, F, d.ff_cnt);
    VR_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(d.temp, d.temp_bytes, d.ff_cnt, d.dense,
                                               (int)F + 1, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(&P, d.dense + F, 4, cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaStreamSynchronize(s));
    if ((st = vr_pbg_reserve(&d, (edges > n3 ? edges : n3) + 1)) != VR_OK)
        goto done;
    /* renumbered by smallest vertex: the packing is the same under any numbering, but with
     * patches numbered where they lie (vertex ids are coherent in loaded meshes, whatever the
     * triangle order) its host pass stays in the caches on a randomly ordered mesh (sphere:1.3M
     * random, 64 / 192: 36 -> 24 ms on the development machine) */
    VR_CUDA_GOTO(cudaMemsetAsync(d.dist, 0xff, (size_t)F * 4, s));
    VR_PBG_LAUNCH(vr_pbg_min_vertex_kernel, n3, d.idx, d.patch, n3, d.dist);
    VR_PBG_LAUNCH(vr_pbg_label_keys_kernel, F, d.patch, d.dist, F, (uint64_t)V << 32, d.k0);
    VR_CUDA_GOTO(cub::DeviceRadixSort::SortKeys(d.temp, d.temp_bytes, d.k0, d.k1, (int)F, 0,
                                                vbits, s));
    VR_PBG_LAUNCH(vr_pbg_rank_kernel, P, d.k1, P, d.dense);
    {
        struct {
            void **p;
            size_t bytes;
        } a[] = {
            {(void **)&d.pfaces, ((size_t)P + 1) * 4}, {(void **)&d.pverts, ((size_t)P + 1) * 4},
            {(void **)&d.batch_of, (size_t)P * 4},     {(void **)&d.pv_off, ((size_t)P + 1) * 4},
            {(void **)&d.pn_cnt, ((size_t)P + 1) * 4}, {(void **)&d.pn_off, ((size_t)P + 1) * 4},
            {(void **)&d.lowest, (size_t)P * 4},       {(void **)&d.roots, (size_t)P * 4},
        };
        for (size_t k = 0; k < VR_COUNT_OF(a) && st == VR_OK; ++k)
            st = vr_cuda_alloc(a[k].p, a[k].bytes, "gpu patches: patch graph");
        if (st != VR_OK)
            goto done;
    }
    {
        const uint32_t *fp = d.region;
        const uint64_t none = (uint64_t)P << 32;
        const int pbits = 32 + vr_pbg_bits(P);
        VR_PBG_LAUNCH(vr_pbg_face_patch_kernel, F, d.patch, d.dense, F, d.region);
        /* sizes: faces and distinct vertices per patch; vertex list offsets by a scan */
        VR_CUDA_GOTO(cudaMemsetAsync(d.pverts + P, 0, 4, s));
        VR_PBG_LAUNCH(vr_pbg_gather_kernel, F, d.patch, d.dense, d.count, d.verts, F, d.pfaces,
                      d.pverts);
        VR_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(d.temp, d.temp_bytes, d.pverts, d.pv_off,
                                                   (int)P + 1, s));
        /* roots: patches sorted by their lowest face */
        VR_CUDA_GOTO(cudaMemsetAsync(d.lowest, 0xff, (size_t)P * 4, s));
        VR_PBG_LAUNCH(vr_pbg_lowest_kernel, F, fp, F, d.lowest);
        VR_PBG_LAUNCH(vr_pbg_root_keys_kernel, P, d.lowest, P, d.k0, d.v0);
        VR_CUDA_GOTO(cub::DeviceRadixSort::SortPairs(d.temp, d.temp_bytes, d.k0, d.k1, d.v0,
                                                     d.roots, (int)P, 0, vr_pbg_bits(F), s));
        /* vertex lists: sorted (patch, vertex) keys, one per run, into pos_of */
        VR_PBG_LAUNCH(vr_pbg_patch_vertex_keys_kernel, n3, d.idx, fp, n3, d.k0);
        VR_CUDA_GOTO(cub::DeviceRadixSort::SortKeys(d.temp, d.temp_bytes, d.k0, d.k1, (int)n3, 0,
                                                    pbits, s));
        VR_PBG_LAUNCH(vr_pbg_run_heads_kernel, n3 + 1, d.k1, n3, none, d.v0);
        VR_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(d.temp, d.temp_bytes, d.v0, d.v1, (int)n3 + 1,
                                                   s));
        VR_PBG_LAUNCH(vr_pbg_scatter_low_kernel, n3, d.k1, d.v0, d.v1, n3, d.pos_of);
        VR_CUDA_GOTO(cudaMemcpyAsync(&pv_heads, d.v1 + n3, 4, cudaMemcpyDeviceToHost, s));
        /* neighbour lists: (p, q) keys with their slots; the first mention of each pair, sorted
         * by (p, slot), gives p's neighbours in the order the packing's reference walks them */
        VR_CUDA_GOTO(cudaMemsetAsync(d.pn_cnt, 0, ((size_t)P + 1) * 4, s));
        if (edges > 0) { /* a soup of separate triangles has none */
            VR_PBG_LAUNCH(vr_pbg_pair_keys_kernel, F, d.ff_off, d.ff, fp, F, none, d.k0, d.v0);
            VR_CUDA_GOTO(cub::DeviceRadixSort::SortPairs(d.temp, d.temp_bytes, d.k0, d.k1, d.v0,
                                                         d.v1, (int)edges, 0, pbits, s));
            VR_PBG_LAUNCH(vr_pbg_first_mention_kernel, edges, d.k1, d.v1, edges, none, d.k0,
                          d.v0, d.pn_cnt);
            VR_CUDA_GOTO(cub::DeviceRadixSort::SortPairs(d.temp, d.temp_bytes, d.k0, d.k1, d.v0,
                                                         d.v1, (int)edges, 0, pbits, s));
        }
        VR_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(d.temp, d.temp_bytes, d.pn_cnt, d.pn_off,
                                                   (int)P + 1, s));
        VR_CUDA_GOTO(cudaMemcpyAsync(&pv_total, d.pv_off + P, 4, cudaMemcpyDeviceToHost, s));
        VR_CUDA_GOTO(cudaMemcpyAsync(&pn_total, d.pn_off + P, 4, cudaMemcpyDeviceToHost, s));
        VR_CUDA_GOTO(cudaStreamSynchronize(s));
    }
    if (pv_heads != pv_total) { /* the vertex counts of the Lloyd rounds must agree */
        st = VR_ERROR(VR_ERR_CUDA, "gpu patches: %u vertex-list entries, %u counted",
                      pv_heads, pv_total);
        goto done;
    }
    h_batch = (uint32_t *)malloc(((size_t)P + 1) * 4);
    out->tri_order = (uint32_t *)malloc((size_t)F * 4);
    out->starts = (uint32_t *)calloc((size_t)P + 1, 4);
    if (!h_batch || !out->tri_order || !out->starts) {
        st = VR_ERROR(VR_ERR_OOM, "gpu patches: plan of %u patches", P);
        goto done;
    }
    if ((st = vr_patch_graph_alloc(&g, P, V, pv_total, pn_total)) != VR_OK)
        goto done;
    VR_CUDA_GOTO(cudaMemcpyAsync(g.size, d.pfaces, (size_t)P * 4, cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(g.pv_off, d.pv_off, ((size_t)P + 1) * 4,
                                 cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(g.pv, d.pos_of, (size_t)pv_total * 4, cudaMemcpyDeviceToHost,
                                 s));
    VR_CUDA_GOTO(cudaMemcpyAsync(g.pn_off, d.pn_off, ((size_t)P + 1) * 4,
                                 cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(g.pn, d.v1, (size_t)pn_total * 4, cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaMemcpyAsync(g.roots, d.roots, (size_t)P * 4, cudaMemcpyDeviceToHost, s));
    VR_CUDA_GOTO(cudaStreamSynchronize(s));
    if ((st = vr_patches_pack(h_batch, &batches, &g, max_unique, max_faces)) != VR_OK)
        goto done;
    /* batch starts in indices: each batch's faces, scanned */
    for (uint32_t p = 0; p < P; ++p)
        out->starts[h_batch[p] + 1] += 3 * g.size[p];
    for (uint32_t k = 0; k < batches; ++k)
        out->starts[k + 1] += out->starts[k];
    out->batch_count = batches;
    out->group_count = P;
    /* tri_order: faces sorted by (batch, face id) */
    VR_CUDA_GOTO(cudaMemcpyAsync(d.batch_of, h_batch, (size_t)P * 4, cudaMemcpyHostToDevice, s));
    VR_PBG_LAUNCH(vr_pbg_batch_keys_kernel, F, d.patch, d.dense, d.batch_of, F, d.k0);
    VR_CUDA_GOTO(cub::DeviceRadixSort::SortKeys(d.temp, d.temp_bytes, d.k0, d.k1, (int)F, 0,
                                                32 + vr_pbg_bits(out->batch_count), s));
    VR_PBG_LAUNCH(vr_pbg_low_kernel, F, d.k1, F, d.v0);
    VR_CUDA_GOTO(cudaMemcpyAsync(out->tri_order, d.v0, (size_t)F * 4, cudaMemcpyDeviceToHost,
                                 s));
    VR_CUDA_GOTO(cudaEventRecord(ev[1], s));
    VR_CUDA_GOTO(cudaEventSynchronize(ev[1]));
    if (ms)
        VR_CUDA_GOTO(cudaEventElapsedTime(ms, ev[0], ev[1]));
    out->triangle_count = F;
done:
    free(h_batch);
    vr_patch_graph_free(&g);
    vr_pbg_dev_free(&d);
    /* teardown: nothing to report if these fail after the result is complete */
    if (ev[0])
        (void)cudaEventDestroy(ev[0]);
    if (ev[1])
        (void)cudaEventDestroy(ev[1]);
    if (s)
        (void)cudaStreamDestroy(s);
    if (st != VR_OK)
        vr_batch_plan_free(out);
    return st;
}
