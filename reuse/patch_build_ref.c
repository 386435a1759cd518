/* patch_build_ref.c - the CPU reference of the GPU patch builder (reuse/patch_build.cu, whose
 * comment argues the design): the same synchronous rounds written as plain loops, so it yields
 * the GPU's plan bit for bit (`vreuse_tests gpu/gpupatch` compares them). Every decision is a
 * reduction whose result does not depend on the order it is evaluated in (minimum patch label,
 * minimum distance, maximum packed key, counts), which is what makes the parallel version
 * deterministic and this loop its exact twin; both pack the patches into batches with the CPU
 * builder's vr_patches_pack (reuse/patch_pack.c). Also the stub of vr_patches_build_gpu for
 * builds without CUDA.
 * Try: `vreuse_tests reuse/gpupatch`, `vreuse sim bunny.obj --order random --patch-builder gpu`.
 */
#include "reuse/patch_build.h"
#include "reuse/patch_pack.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/vr_mem.h"

/* ---- the reference ------------------------------------------------------------------------ */

typedef struct vr_pbr {
    const uint32_t *idx;
    uint32_t faces, vertices, max_unique, max_faces;
    uint32_t *vf_off, *vf;   /* vertices + 1, then the faces of each vertex (a degenerate face
                                once per corner) */
    uint32_t *ff_off, *ff;   /* faces + 1, then every face sharing an edge with each face */
    uint8_t *open;           /* faces: 1 when an edge is degenerate or shared with no face */
    uint32_t *patch, *next;  /* faces: patch label (its seed's face id) or VR_PBG_NONE */
    uint32_t *region;        /* faces: the label before a split; growth stays inside it */
    uint32_t *gdist;         /* faces: round in which the growth reached the face (seeds 0) */
    uint32_t *dist, *dnext;  /* faces: steps from the patch boundary, VR_PBG_NONE = not yet */
    uint8_t *is_seed;        /* faces */
    uint64_t *centre, *far;  /* by label: max vr_pbg_key(dist, f), max vr_pbg_key(gdist, f) */
    uint32_t *count, *verts; /* by label: faces, distinct vertices */
} vr_pbr;

static void vr_pbr_free(vr_pbr *b)
{
    void *const bufs[] = {b->vf_off, b->vf,    b->ff_off, b->ff,     b->open,
                          b->patch,  b->next,  b->region, b->gdist,  b->dist,
                          b->dnext,  b->is_seed, b->centre, b->far,  b->count,
                          b->verts};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
}

static int vr_pbr_has2(const uint32_t *c, uint32_t u, uint32_t w)
{
    return (c[0] == u || c[1] == u || c[2] == u) && (c[0] == w || c[1] == w || c[2] == w);
}

/* vertex -> faces, and face -> faces over shared edges: g is f's neighbour when g != f has
 * both ends of one of f's non-degenerate edges (two distinct corners of a triangle always
 * form one of its edges). Duplicates are harmless: every use is a min or max. */
static vr_status vr_pbr_adjacency(vr_pbr *b)
{
    const uint32_t F = b->faces, V = b->vertices;
    const uint32_t *idx = b->idx;
    b->vf_off = calloc((size_t)V + 2, sizeof *b->vf_off);
    b->vf = malloc((3 * (size_t)F + 1) * sizeof *b->vf);
    b->ff_off = malloc(((size_t)F + 1) * sizeof *b->ff_off);
    b->open = calloc((size_t)F + 1, 1);
    if (!b->vf_off || !b->vf || !b->ff_off || !b->open)
        return VR_ERROR(VR_ERR_OOM, "gpu patches ref: adjacency of %u triangles", F);
    for (size_t i = 0; i < 3 * (size_t)F; ++i)
        ++b->vf_off[idx[i] + 2];
    for (uint32_t v = 0; v < V; ++v)
        b->vf_off[v + 2] += b->vf_off[v + 1];
    for (size_t i = 0; i < 3 * (size_t)F; ++i)
        b->vf[b->vf_off[idx[i] + 1]++] = (uint32_t)(i / 3);
    /* two passes over the edges: count, then fill */
    size_t total = 0;
    for (int pass = 0; pass < 2; ++pass) {
        size_t n = 0;
        for (uint32_t f = 0; f < F; ++f) {
            const uint32_t *c = idx + 3 * (size_t)f;
            if (pass == 0)
                b->ff_off[f] = (uint32_t)n;
            for (int e = 0; e < 3; ++e) {
                const uint32_t u = c[e], w = c[(e + 1) % 3];
                if (u == w) {
                    b->open[f] = 1;
                    continue;
                }
                uint32_t shared = 0;
                for (uint32_t j = b->vf_off[u]; j < b->vf_off[u + 1]; ++j) {
                    const uint32_t g = b->vf[j];
                    if (g == f || !vr_pbr_has2(idx + 3 * (size_t)g, u, w))
                        continue;
                    if (pass == 1)
                        b->ff[n] = g;
                    ++n;
                    ++shared;
                }
                if (!shared)
                    b->open[f] = 1;
            }
        }
        if (pass == 0) {
            if (n > UINT32_MAX)
                return VR_ERROR(VR_ERR_OVERFLOW, "gpu patches ref: more than 2^32 adjacencies");
            total = n;
            b->ff_off[F] = (uint32_t)n;
            b->ff = malloc((total + 1) * sizeof *b->ff);
            if (!b->ff)
                return VR_ERROR(VR_ERR_OOM, "gpu patches ref: %zu face adjacencies", total);
        }
    }
    return VR_OK;
}

/* Initial seeds: components labelled by their smallest face id (a breadth-first pass from each
 * face not reached yet, in ascending order), each face ranked by face id inside its component,
 * k = ceil(n / target) seeds at the ranks vr_pbg_is_seed picks. Scratch: next (queue), dist
 * (label), dnext (rank counter), gdist (component size). */
static void vr_pbr_seed(vr_pbr *b)
{
    const uint32_t F = b->faces, target = vr_patch_target(b->max_unique, b->max_faces);
    uint32_t *queue = b->next, *label = b->dist, *seen_rank = b->dnext, *size = b->gdist;
    for (uint32_t f = 0; f < F; ++f) {
        label[f] = VR_PBG_NONE;
        size[f] = 0;
        seen_rank[f] = 0;
    }
    for (uint32_t r = 0; r < F; ++r) {
        if (label[r] != VR_PBG_NONE)
            continue;
        uint32_t head = 0, n = 0;
        label[r] = r;
        queue[n++] = r;
        while (head < n) {
            const uint32_t f = queue[head++];
            for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1]; ++j)
                if (label[b->ff[j]] == VR_PBG_NONE) {
                    label[b->ff[j]] = r;
                    queue[n++] = b->ff[j];
                }
        }
        size[r] = n;
    }
    for (uint32_t f = 0; f < F; ++f) {
        const uint32_t c = label[f], n = size[c], k = (n + target - 1) / target;
        const uint32_t rank = seen_rank[c]++;
        b->patch[f] = vr_pbg_is_seed(rank, n, k) ? f : VR_PBG_NONE;
    }
    for (uint32_t f = 0; f < F; ++f)
        b->gdist[f] = 0;
}

/* Multi-source growth in synchronous rounds: an unassigned face takes the smallest label among
 * its neighbours assigned before the round (inside the same region when `region` is set); gdist
 * gets the round. Until a round changes nothing. */
static void vr_pbr_grow(vr_pbr *b, const uint32_t *region)
{
    const uint32_t F = b->faces;
    for (uint32_t round = 1;; ++round) {
        int changed = 0;
        for (uint32_t f = 0; f < F; ++f) {
            b->next[f] = b->patch[f];
            if (b->patch[f] != VR_PBG_NONE)
                continue;
            uint32_t m = VR_PBG_NONE;
            for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1]; ++j) {
                const uint32_t g = b->ff[j], q = b->patch[g];
                if (q != VR_PBG_NONE && (!region || region[g] == region[f]) && q < m)
                    m = q;
            }
            if (m != VR_PBG_NONE) {
                b->next[f] = m;
                b->gdist[f] = round;
                changed = 1;
            }
        }
        uint32_t *t = b->patch;
        b->patch = b->next;
        b->next = t;
        if (!changed)
            return;
    }
}

/* Faces, distinct vertices and the farthest-grown face per label; returns the patches over a
 * limit. A vertex counts once for each distinct label among its faces. */
static uint32_t vr_pbr_measure(vr_pbr *b)
{
    const uint32_t F = b->faces;
    for (uint32_t f = 0; f < F; ++f) {
        b->count[f] = b->verts[f] = 0;
        b->far[f] = 0;
    }
    for (uint32_t f = 0; f < F; ++f) {
        const uint32_t p = b->patch[f];
        ++b->count[p];
        const uint64_t k = vr_pbg_key(b->gdist[f], f);
        if (k > b->far[p])
            b->far[p] = k;
    }
    for (uint32_t v = 0; v < b->vertices; ++v)
        for (uint32_t i = b->vf_off[v]; i < b->vf_off[v + 1]; ++i) {
            const uint32_t p = b->patch[b->vf[i]];
            uint32_t j = b->vf_off[v];
            while (j < i && b->patch[b->vf[j]] != p)
                ++j;
            b->verts[p] += j == i;
        }
    uint32_t over = 0;
    for (uint32_t f = 0; f < F; ++f)
        over += b->patch[f] == f &&
                vr_pbg_over(b->count[f], b->verts[f], b->max_faces, b->max_unique);
    return over;
}

/* Lloyd's update: distance from the patch boundary (faces with an open edge or a neighbour in
 * another patch) in synchronous rounds inside each patch; each patch's new seed is its farthest
 * face (smallest id on ties; the old seed when the patch has no boundary); with add_seeds, a
 * patch over a limit also gets its face farthest from the old seed. Then every face is
 * released and the new seeds hold their own labels. */
static void vr_pbr_update(vr_pbr *b, int add_seeds)
{
    const uint32_t F = b->faces;
    for (uint32_t f = 0; f < F; ++f) {
        int boundary = b->open[f];
        for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1] && !boundary; ++j)
            boundary = b->patch[b->ff[j]] != b->patch[f];
        b->dist[f] = boundary ? 0 : VR_PBG_NONE;
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t f = 0; f < F; ++f) {
            b->dnext[f] = b->dist[f];
            if (b->dist[f] != VR_PBG_NONE)
                continue;
            uint32_t m = VR_PBG_NONE;
            for (uint32_t j = b->ff_off[f]; j < b->ff_off[f + 1]; ++j) {
                const uint32_t g = b->ff[j];
                if (b->patch[g] == b->patch[f] && b->dist[g] < m)
                    m = b->dist[g];
            }
            if (m != VR_PBG_NONE) {
                b->dnext[f] = m + 1;
                changed = 1;
            }
        }
        uint32_t *t = b->dist;
        b->dist = b->dnext;
        b->dnext = t;
    }
    for (uint32_t f = 0; f < F; ++f)
        b->centre[f] = 0;
    for (uint32_t f = 0; f < F; ++f) {
        const uint32_t p = b->patch[f];
        if (b->dist[f] != VR_PBG_NONE && vr_pbg_key(b->dist[f], f) > b->centre[p])
            b->centre[p] = vr_pbg_key(b->dist[f], f);
    }
    memset(b->is_seed, 0, F);
    for (uint32_t p = 0; p < F; ++p) {
        if (b->patch[p] != p)
            continue;
        const uint32_t c = b->centre[p] ? vr_pbg_key_face(b->centre[p]) : p;
        b->is_seed[c] = 1;
        if (add_seeds && vr_pbg_over(b->count[p], b->verts[p], b->max_faces, b->max_unique) &&
            vr_pbg_key_face(b->far[p]) != c)
            b->is_seed[vr_pbg_key_face(b->far[p])] = 1;
    }
    for (uint32_t f = 0; f < F; ++f) {
        b->patch[f] = b->is_seed[f] ? f : VR_PBG_NONE;
        b->gdist[f] = 0;
    }
}

/* One split round: every patch over a limit is released and regrown, inside itself, from its
 * seed and its face farthest from the seed (two distinct faces: an over patch has >= 2). */
static void vr_pbr_split(vr_pbr *b)
{
    const uint32_t F = b->faces;
    memcpy(b->region, b->patch, (size_t)F * sizeof *b->region);
    for (uint32_t f = 0; f < F; ++f) {
        const uint32_t p = b->region[f];
        if (!vr_pbg_over(b->count[p], b->verts[p], b->max_faces, b->max_unique))
            continue;
        const int seed = f == p || f == vr_pbg_key_face(b->far[p]);
        b->patch[f] = seed ? f : VR_PBG_NONE;
        if (seed)
            b->gdist[f] = 0;
    }
    vr_pbr_grow(b, b->region);
}

vr_status vr_patches_build_gpu_ref(vr_batch_plan *out, const uint32_t *indices,
                                   uint32_t index_count, uint32_t vertex_count,
                                   uint32_t max_unique, uint32_t max_indices)
{
    assert(out && (indices || index_count == 0));
    vr_status st = vr_batch_plan_begin(out, index_count, max_unique, max_indices, "gpu patches");
    if (st != VR_OK || index_count == 0)
        return st;
    const uint32_t F = index_count / 3;
    vr_pbr b;
    memset(&b, 0, sizeof b);
    b.idx = indices;
    b.faces = F;
    b.vertices = vertex_count;
    b.max_unique = max_unique;
    b.max_faces = max_indices / 3;
    if ((st = vr_pbr_adjacency(&b)) != VR_OK)
        goto done;
    const size_t n = (size_t)F + 1;
    b.patch = malloc(n * 4);
    b.next = malloc(n * 4);
    b.region = malloc(n * 4);
    b.gdist = malloc(n * 4);
    b.dist = malloc(n * 4);
    b.dnext = malloc(n * 4);
    b.count = malloc(n * 4);
    b.verts = malloc(n * 4);
    b.is_seed = malloc(n);
    b.centre = malloc(n * 8);
    b.far = malloc(n * 8);
    if (!b.patch || !b.next || !b.region || !b.gdist || !b.dist || !b.dnext || !b.count ||
        !b.verts || !b.is_seed || !b.centre || !b.far) {
        st = VR_ERROR(VR_ERR_OOM, "gpu patches ref: scratch for %u triangles", F);
        goto done;
    }
    vr_pbr_seed(&b);
    vr_pbr_grow(&b, NULL);
    uint32_t over = vr_pbr_measure(&b);
    for (int u = 0; u < VR_PBG_LLOYD; ++u) {
        vr_pbr_update(&b, u >= 1 && over > 0);
        vr_pbr_grow(&b, NULL);
        over = vr_pbr_measure(&b);
    }
    out->iterations = 1 + VR_PBG_LLOYD;
    for (uint32_t round = 0; over > 0; ++round) {
        if (round == VR_PBG_SPLIT_ROUNDS_MAX) {
            st = VR_ERROR(VR_ERR_FORMAT, "gpu patches ref: %u patches still over a limit after "
                          "%u split rounds", over, round);
            goto done;
        }
        out->split += over;
        vr_pbr_split(&b);
        over = vr_pbr_measure(&b);
    }
    /* labels in ascending order numbered densely (through `next`, free now); each face's
     * patch number (through `dist`), then the shared packing */
    uint32_t P = 0;
    uint32_t *dense = b.next, *face_patch = b.dist;
    for (uint32_t f = 0; f < F; ++f)
        if (b.patch[f] == f)
            dense[f] = P++;
    for (uint32_t f = 0; f < F; ++f)
        face_patch[f] = dense[b.patch[f]];
    const vr_patch_cut cut = {indices, b.ff_off, b.ff, face_patch, NULL, F, vertex_count, P};
    st = vr_patches_pack_cut(out, &cut, max_unique, b.max_faces);
done:
    vr_pbr_free(&b);
    if (st != VR_OK)
        vr_batch_plan_free(out);
    return st;
}

#ifndef VR_HAVE_CUDA
vr_status vr_patches_build_gpu(vr_batch_plan *out, const uint32_t *indices, uint32_t index_count,
                               uint32_t vertex_count, uint32_t max_unique, uint32_t max_indices,
                               float *ms)
{
    (void)indices;
    (void)index_count;
    (void)vertex_count;
    (void)max_unique;
    (void)max_indices;
    if (ms)
        *ms = 0;
    memset(out, 0, sizeof *out);
    return VR_ERROR(VR_ERR_NO_DEVICE, "gpu patches: this build has no CUDA");
}
#endif
