/* patch_pack.c - packing patches into batches over their adjacency (reuse/patch_pack.h), shared
 * by the CPU patch builder and the GPU builder's host side and reference, so that both fill
 * their batches the same way. Try: `vreuse_tests reuse/plan reuse/gpupatch`.
 */
#include "reuse/patch_pack.h"

#include <stdlib.h>
#include <string.h>

#include "pipeline/vr_mem.h"

#define VR_PP_NONE 0xffffffffu

uint32_t vr_patch_target(uint32_t max_unique, uint32_t max_faces)
{
    const double by_vertices = 1.4 * (double)max_unique;
    double t = by_vertices < (double)max_faces ? by_vertices : (double)max_faces;
    t *= 0.85 / 4;
    return t < 1.0 ? 1u : (uint32_t)t;
}

void vr_patch_graph_free(vr_patch_graph *g)
{
    void *const bufs[] = {g->size, g->pv_off, g->pv, g->pn_off, g->pn, g->roots};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    memset(g, 0, sizeof *g);
}

vr_status vr_patch_graph_alloc(vr_patch_graph *g, uint32_t patches, uint32_t vertices,
                               uint32_t pv_total, uint32_t pn_total)
{
    memset(g, 0, sizeof *g);
    const size_t P = (size_t)patches + 1;
    g->patches = patches;
    g->vertices = vertices;
    g->size = malloc(P * sizeof *g->size);
    g->pv_off = malloc(P * sizeof *g->pv_off);
    g->pv = malloc(((size_t)pv_total + 1) * sizeof *g->pv);
    g->pn_off = malloc(P * sizeof *g->pn_off);
    g->pn = malloc(((size_t)pn_total + 1) * sizeof *g->pn);
    g->roots = malloc(P * sizeof *g->roots);
    if (!g->size || !g->pv_off || !g->pv || !g->pn_off || !g->pn || !g->roots) {
        vr_patch_graph_free(g);
        return VR_ERROR(VR_ERR_OOM, "patch packing: graph of %u patches", patches);
    }
    g->pv_off[patches] = pv_total;
    g->pn_off[patches] = pn_total;
    return VR_OK;
}

/* The graph of a cut, on the host. */
static vr_status vr_patch_graph_of_cut(vr_patch_graph *g, const vr_patch_cut *cut)
{
    memset(g, 0, sizeof *g);
    const uint32_t P = cut->patches, F = cut->faces, V = cut->vertices;
    uint32_t *first = calloc((size_t)P + 1, sizeof *first);
    uint32_t *by_patch = malloc(((size_t)F + 1) * sizeof *by_patch);
    uint32_t *vmark = calloc((size_t)V + 1, sizeof *vmark);  /* patch + 1 that listed v */
    uint32_t *pmark = calloc((size_t)P + 1, sizeof *pmark);  /* patch + 1 that listed q */
    vr_status st = VR_OK;
    if (!first || !by_patch || !vmark || !pmark) {
        st = VR_ERROR(VR_ERR_OOM, "patch packing: %u patches of %u triangles", P, F);
        goto done;
    }
    /* faces grouped by patch, ascending inside a patch (a counting sort) */
    for (uint32_t f = 0; f < F; ++f)
        ++first[cut->patch[f] + 1];
    for (uint32_t p = 0; p < P; ++p)
        first[p + 1] += first[p];
    for (uint32_t f = 0; f < F; ++f)
        by_patch[first[cut->patch[f]]++] = f;
    for (uint32_t p = P; p > 0; --p)
        first[p] = first[p - 1];
    first[0] = 0;
    /* two passes: count the distinct vertices and neighbours, then list them */
    uint64_t nv = 0, nn = 0;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
            if (nv > UINT32_MAX || nn > UINT32_MAX) {
                st = VR_ERROR(VR_ERR_OVERFLOW, "patch packing: more than 2^32 entries");
                goto done;
            }
            if ((st = vr_patch_graph_alloc(g, P, V, (uint32_t)nv, (uint32_t)nn)) != VR_OK)
                goto done;
            memset(vmark, 0, ((size_t)V + 1) * sizeof *vmark);
            memset(pmark, 0, ((size_t)P + 1) * sizeof *pmark);
        }
        nv = nn = 0;
        for (uint32_t p = 0; p < P; ++p) {
            if (pass == 1) {
                g->size[p] = first[p + 1] - first[p];
                g->pv_off[p] = (uint32_t)nv;
                g->pn_off[p] = (uint32_t)nn;
            }
            pmark[p] = p + 1; /* not its own neighbour */
            for (uint32_t i = first[p]; i < first[p + 1]; ++i) {
                const uint32_t f = by_patch[i];
                const uint32_t *c = cut->idx + 3 * (size_t)f;
                for (int k = 0; k < 3; ++k)
                    if (vmark[c[k]] != p + 1) {
                        vmark[c[k]] = p + 1;
                        if (pass == 1)
                            g->pv[nv] = c[k];
                        ++nv;
                    }
                for (uint32_t j = cut->ff_off[f]; j < cut->ff_off[f + 1]; ++j) {
                    const uint32_t q = cut->patch[cut->ff[j]];
                    if (pmark[q] != p + 1) {
                        pmark[q] = p + 1;
                        if (pass == 1)
                            g->pn[nn] = q;
                        ++nn;
                    }
                }
            }
        }
    }
    /* roots: the patches in the order their lowest faces come */
    uint32_t n = 0;
    memset(pmark, 0, ((size_t)P + 1) * sizeof *pmark);
    for (uint32_t f = 0; f < F; ++f)
        if (!pmark[cut->patch[f]]) {
            pmark[cut->patch[f]] = 1;
            g->roots[n++] = cut->patch[f];
        }
    if (n != P)
        st = VR_ERROR(VR_ERR_ARG, "patch packing: %u of %u patches have no face", P - n, P);
done:
    free(first);
    free(by_patch);
    free(vmark);
    free(pmark);
    if (st != VR_OK)
        vr_patch_graph_free(g);
    return st;
}

typedef struct vr_pp {
    const vr_patch_graph *g;
    uint32_t max_unique, max_faces;
    uint32_t *order;     /* patches: breadth-first order */
    uint32_t *batch_of;  /* patches: batch, VR_PP_NONE while not packed */
    uint32_t *in_batch;  /* vertices: batch + 1 of the batch that holds the vertex */
    uint32_t *cand;      /* patches: candidates of the batch being grown */
    uint32_t *cand_mark; /* patches: batch + 1 that listed the patch as a candidate */
} vr_pp;

/* Orders the patches for locality (adjacent patches next to each other, so packing joins
 * neighbours and neighbouring blocks share their ribbon vertices in L2): breadth first over the
 * patch adjacency from each root not reached yet. Uses cand_mark as `seen`. */
static void vr_pp_order(vr_pp *p)
{
    const vr_patch_graph *g = p->g;
    uint32_t *seen = p->cand_mark, n = 0;
    memset(seen, 0, (size_t)g->patches * sizeof *seen);
    for (uint32_t k = 0; k < g->patches; ++k) {
        const uint32_t root = g->roots[k];
        if (seen[root])
            continue;
        uint32_t head = n;
        seen[root] = 1;
        p->order[n++] = root;
        while (head < n) {
            const uint32_t q = p->order[head++];
            for (uint32_t j = g->pn_off[q]; j < g->pn_off[q + 1]; ++j) {
                const uint32_t r = g->pn[j];
                if (!seen[r]) {
                    seen[r] = 1;
                    p->order[n++] = r;
                }
            }
        }
    }
}

/* Patch r's vertices that batch `id` lacks (in_batch[v] == id: v is in it). */
static uint32_t vr_pp_fresh(const vr_pp *p, uint32_t r, uint32_t id)
{
    uint32_t fresh = 0;
    for (uint32_t j = p->g->pv_off[r]; j < p->g->pv_off[r + 1]; ++j)
        fresh += p->in_batch[p->g->pv[j]] != id;
    return fresh;
}

/* The first patch of order[*next ..] not packed yet, when it fits the batch `id` (faces and
 * unique so far); VR_PP_NONE otherwise. *next moves past the packed ones. */
static uint32_t vr_pp_next_fit(vr_pp *p, uint32_t *next, uint32_t faces, uint32_t unique,
                               uint32_t id)
{
    const uint32_t P = p->g->patches;
    while (*next < P && p->batch_of[p->order[*next]] != VR_PP_NONE)
        ++*next;
    if (*next == P)
        return VR_PP_NONE;
    const uint32_t r = p->order[*next];
    if (faces + p->g->size[r] > p->max_faces)
        return VR_PP_NONE;
    return unique + vr_pp_fresh(p, r, id) <= p->max_unique ? r : VR_PP_NONE;
}

/* The packing itself (vr_patches_pack's comment). A neighbour that does not fit never will (the
 * batch only grows), so it leaves the candidates. Returns the batch count. */
static uint32_t vr_pp_pack(vr_pp *p)
{
    const vr_patch_graph *g = p->g;
    const uint32_t P = g->patches;
    memset(p->in_batch, 0, (size_t)g->vertices * sizeof *p->in_batch);
    memset(p->cand_mark, 0, (size_t)P * sizeof *p->cand_mark);
    for (uint32_t q = 0; q < P; ++q)
        p->batch_of[q] = VR_PP_NONE;
    uint32_t batches = 0;
    for (uint32_t k = 0; k < P; ++k) {
        uint32_t q = p->order[k];
        if (p->batch_of[q] != VR_PP_NONE)
            continue;
        uint32_t next = k + 1;
        const uint32_t id = ++batches; /* in_batch and cand_mark hold batch + 1 */
        uint32_t faces = 0, unique = 0, nc = 0;
        while (q != VR_PP_NONE) {
            p->batch_of[q] = id - 1;
            faces += g->size[q];
            for (uint32_t j = g->pv_off[q]; j < g->pv_off[q + 1]; ++j)
                if (p->in_batch[g->pv[j]] != id) {
                    p->in_batch[g->pv[j]] = id;
                    ++unique;
                }
            for (uint32_t j = g->pn_off[q]; j < g->pn_off[q + 1]; ++j) {
                const uint32_t r = g->pn[j];
                if (p->batch_of[r] == VR_PP_NONE && p->cand_mark[r] != id) {
                    p->cand_mark[r] = id;
                    p->cand[nc++] = r;
                }
            }
            uint32_t best = VR_PP_NONE, best_shared = 0, kept = 0;
            for (uint32_t i = 0; i < nc; ++i) {
                const uint32_t r = p->cand[i];
                if (p->batch_of[r] != VR_PP_NONE || faces + g->size[r] > p->max_faces)
                    continue;
                const uint32_t fresh = vr_pp_fresh(p, r, id);
                if (unique + fresh > p->max_unique)
                    continue;
                p->cand[kept++] = r;
                const uint32_t shared = g->pv_off[r + 1] - g->pv_off[r] - fresh;
                if (best == VR_PP_NONE || shared > best_shared) {
                    best = r;
                    best_shared = shared;
                }
            }
            nc = kept;
            if (best == VR_PP_NONE) /* no neighbour fits: the order's next, if it fits */
                best = vr_pp_next_fit(p, &next, faces, unique, id);
            q = best;
        }
    }
    return batches;
}

vr_status vr_patches_pack(uint32_t *batch_of, uint32_t *batches, const vr_patch_graph *g,
                          uint32_t max_unique, uint32_t max_faces)
{
    const uint32_t P = g->patches;
    *batches = 0;
    for (uint32_t q = 0; q < P; ++q) {
        const uint32_t verts = g->pv_off[q + 1] - g->pv_off[q];
        if (g->size[q] == 0 || g->size[q] > max_faces || verts > max_unique)
            return VR_ERROR(VR_ERR_ARG, "patch packing: patch %u has %u faces and %u vertices "
                            "(limits %u and %u)", q, g->size[q], verts, max_faces, max_unique);
    }
    vr_pp p;
    memset(&p, 0, sizeof p);
    p.g = g;
    p.max_unique = max_unique;
    p.max_faces = max_faces;
    p.batch_of = batch_of;
    p.order = malloc(((size_t)P + 1) * sizeof *p.order);
    p.cand = malloc(((size_t)P + 1) * sizeof *p.cand);
    p.cand_mark = malloc(((size_t)P + 1) * sizeof *p.cand_mark);
    p.in_batch = malloc(((size_t)g->vertices + 1) * sizeof *p.in_batch);
    vr_status st = VR_OK;
    if (!p.order || !p.cand || !p.cand_mark || !p.in_batch)
        st = VR_ERROR(VR_ERR_OOM, "patch packing: %u patches", P);
    if (st == VR_OK) {
        vr_pp_order(&p);
        *batches = vr_pp_pack(&p);
    }
    void *const bufs[] = {p.order, p.cand, p.cand_mark, p.in_batch};
    vr_free_all(bufs, VR_COUNT_OF(bufs));
    return st;
}

/* The plan of a packed cut (vr_patches_pack_cut's comment): a counting sort over source ids. */
static vr_status vr_patches_emit(vr_batch_plan *out, const vr_patch_cut *cut,
                                 const uint32_t *batch_of, uint32_t batches)
{
    const uint32_t F = cut->faces;
    out->tri_order = malloc(((size_t)F + 1) * sizeof *out->tri_order);
    out->starts = calloc((size_t)batches + 1, sizeof *out->starts);
    uint32_t *rank = malloc(((size_t)F + 1) * sizeof *rank);
    if (!out->tri_order || !out->starts || !rank) {
        free(rank);
        return VR_ERROR(VR_ERR_OOM, "patch packing: plan of %u triangles", F);
    }
    for (uint32_t f = 0; f < F; ++f)
        rank[cut->src ? cut->src[f] : f] = batch_of[cut->patch[f]]; /* source triangle -> batch */
    uint32_t *next = out->starts; /* triangle offsets, turned into index offsets below */
    for (uint32_t t = 0; t < F; ++t)
        ++next[rank[t] + 1];
    for (uint32_t k = 0; k < batches; ++k)
        next[k + 1] += next[k];
    for (uint32_t t = 0; t < F; ++t)
        out->tri_order[next[rank[t]]++] = t;
    for (uint32_t k = batches; k > 0; --k) /* next[k - 1] is now batch k - 1's end */
        out->starts[k] = 3 * next[k - 1];
    out->starts[0] = 0;
    out->triangle_count = F;
    out->batch_count = batches;
    out->group_count = cut->patches;
    free(rank);
    return VR_OK;
}

vr_status vr_patches_pack_cut(vr_batch_plan *out, const vr_patch_cut *cut, uint32_t max_unique,
                              uint32_t max_faces)
{
    vr_patch_graph g = {0};
    uint32_t batches = 0;
    uint32_t *batch_of = malloc(((size_t)cut->patches + 1) * sizeof *batch_of);
    vr_status st = batch_of ? vr_patch_graph_of_cut(&g, cut)
                            : VR_ERROR(VR_ERR_OOM, "patch packing: %u patches", cut->patches);
    if (st != VR_OK) {
        free(batch_of);
        return st;
    }
    st = vr_patches_pack(batch_of, &batches, &g, max_unique, max_faces);
    if (st == VR_OK)
        st = vr_patches_emit(out, cut, batch_of, batches);
    vr_patch_graph_free(&g);
    free(batch_of);
    return st;
}
