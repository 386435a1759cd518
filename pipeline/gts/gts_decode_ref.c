/* gts_decode_ref.c - CPU decoders of the GTS codec, the oracle for gts_decode.cu:
 * vr_gts_decode_ref is the plain sequential loop (Simple-9 -> U, INC + U -> V, the strip
 * recursion of Meyer et al. 2012 Eq. 3 with restarts) and validates every value it reads;
 * vr_gts_decode_scan_ref runs the GPU's data-parallel passes (Fig. 4, 5, 7) one by one with the
 * shared arithmetic of gts_math.h, so the parallel formulation is tested without a GPU;
 * vr_gts_decode_tiled_ref does the same for the tiled passes (VTile_Reduce, VTile_Scan, V_Tiled:
 * no incscan; Tile_Reduce, Tile_Scan, T_Tiled: M and Q rebuilt per tile from a carry).
 * Try: `vreuse_tests gts/`.
 */
#include "pipeline/gts/gts.h"
#include "pipeline/vr_mem.h"
#include "pipeline/gts/gts_math.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

const char *vr_gts_stage_name(vr_gts_stage s)
{
    static const char *const names[VR_GTS_STAGE_COUNT] = {
        "M_Scan", "Q_Scan", "T_Kernel", "INC_Scan", "V_Kernel", "S_Scan", "D_Scatter", "U_Scan",
        "Tile_Reduce", "Tile_Scan", "T_Tiled", "VTile_Reduce", "VTile_Scan", "V_Tiled"};
    return (unsigned)s < VR_GTS_STAGE_COUNT ? names[s] : "?";
}

const char *vr_gts_error_text(uint32_t bits)
{
    if (bits & VR_GTS_ERR_CODE)
        return "a strip code is 3, or triangle 0 is not R in R mode";
    if (bits & VR_GTS_ERR_SELECTOR)
        return "a Simple-9 selector is above 8";
    if (bits & VR_GTS_ERR_S9COUNT)
        return "the Simple-9 words hold a different number of codes than |U|";
    if (bits & VR_GTS_ERR_INC)
        return "the INC ones disagree with the referenced vertex count";
    if (bits & VR_GTS_ERR_M)
        return "the strip codes need a different |V| (R codes disagree with the restart count)";
    if (bits & VR_GTS_ERR_U)
        return "a re-used vertex lies outside U or refers to a vertex not yet introduced";
    return bits ? "unknown error bits" : "no error";
}

vr_status vr_gts_error_status(uint32_t bits, const char *what)
{
    if (!bits)
        return VR_OK;
    return VR_ERROR(VR_ERR_FORMAT, "%s: malformed stream (error bits 0x%x): %s", what, bits,
                    vr_gts_error_text(bits));
}

uint32_t vr_gts_u_sum(uint32_t *u, const uint32_t *d, uint32_t count, uint32_t u_prev)
{
    uint32_t run = u_prev;
    for (uint32_t k = 0; k < count; ++k)
        u[k] = run += vr_gts_unzigzag(d[k]);
    return run;
}

vr_status vr_gts_decode_uv(uint32_t *u, uint32_t *v, uint32_t *inc_before, const vr_gts *g,
                           const char *what)
{
    assert(u && v && g && what);
    /* U: zigzag deltas from the Simple-9 words, prefix sum from U[-1] = 0 (mod 2^32) */
    vr_status s = vr_s9_decode(u, g->u_count, g->s, g->s_count, what);
    if (s)
        return s;
    vr_gts_u_sum(u, u, g->u_count, 0);
    /* V: an incremental vertex is the next new id; a re-used one must already exist */
    uint32_t next = 0, k = 0;
    for (uint32_t j = 0; j < g->v_count; ++j) {
        if (inc_before)
            inc_before[j] = next;
        if (vr_gts_bit(g->inc, j)) {
            v[j] = next++;
            continue;
        }
        if (k >= g->u_count || u[k] >= next)
            return VR_ERROR(VR_ERR_FORMAT, "%s: V[%u] re-uses %s%u, but only vertices 0..%u exist "
                            "at that point", what, j, k >= g->u_count ? "past |U|: " : "vertex ",
                            k >= g->u_count ? k : u[k], next ? next - 1 : 0);
        v[j] = u[k++];
    }
    if (inc_before)
        inc_before[g->v_count] = next;
    return VR_OK;
}

vr_status vr_gts_decode_ref(uint32_t *indices, const vr_gts *g)
{
    assert(indices && g);
    vr_status s = vr_gts_validate(g, "gts decode");
    if (s)
        return s;
    uint32_t *u = malloc(((size_t)g->u_count + 1) * sizeof *u);
    uint32_t *v = malloc((size_t)g->v_count * sizeof *v);
    if (!u || !v) {
        free(u);
        free(v);
        return VR_ERROR(VR_ERR_OOM, "gts decode: out of memory for |U| = %u, |V| = %u",
                        g->u_count, g->v_count);
    }
    if ((s = vr_gts_decode_uv(u, v, NULL, g, "gts decode")))
        goto done;
    /* T: the strip recursion (Eq. 3); an R triangle takes three V entries */
    const int codes = g->restart == VR_GTS_RESTART_CODE;
    uint32_t pos = 0;
    for (uint32_t i = 0; i < g->strip_triangle_count; ++i) {
        uint32_t *t = indices + 3 * (size_t)i;
        const uint32_t code = vr_gts_code_at(g->c, i, (uint32_t)codes);
        const uint32_t need = vr_gts_m_step(code);
        if (pos + need > g->v_count) { /* pos <= v_count, need <= 3: no overflow */
            s = VR_ERROR(VR_ERR_FORMAT, "gts decode: triangle %u needs V entries %u..%u, |V| is %u",
                         i, pos, pos + need - 1, g->v_count);
            goto done;
        }
        if (code == VR_GTS_CODE_R)
            t[0] = v[pos], t[1] = v[pos + 1], t[2] = v[pos + 2];
        else
            vr_gts_strip_next(t, t - 3, code, v[pos]);
        pos += need;
    }
    if (pos != g->v_count)
        s = VR_ERROR(VR_ERR_FORMAT, "gts decode: the strips use %u of %u V entries", pos,
                     g->v_count);
done:
    free(u);
    free(v);
    return s;
}

/* ---- the data-parallel passes, sequentially -------------------------------------------------- */

/* The U part shared by both scan formulations: S_Scan, D_Scatter, U_Scan into u (u_count + 1
 * entries), error bits into *err. Returns VR_ERR_OOM only. */
static vr_status scan_u(uint32_t *u, const vr_gts *g, uint32_t *err, const char *what)
{
    const uint32_t un = g->u_count;
    uint32_t *sbar = malloc(((size_t)g->s_count + 1) * sizeof *sbar);
    uint32_t *d = malloc(((size_t)un + 1) * sizeof *d);
    vr_status s = VR_OK;
    if (!sbar || !d) {
        s = VR_ERROR(VR_ERR_OOM, "%s: out of memory for |U| = %u", what, un);
        goto done;
    }
    /* S_Scan: exclusive sum of codes per word */
    uint32_t run = 0;
    for (uint32_t l = 0; l < g->s_count; ++l) {
        sbar[l] = run;
        const uint32_t cnt = vr_gts_s9_count(g->s[l] >> 28);
        if (!cnt)
            *err |= VR_GTS_ERR_SELECTOR;
        run += cnt;
    }
    if (run != un)
        *err |= VR_GTS_ERR_S9COUNT;
    /* D_Scatter: one "thread" per word; writes at or past |U| are dropped and flagged */
    memset(d, 0, ((size_t)un + 1) * sizeof *d);
    for (uint32_t l = 0; l < g->s_count; ++l) {
        const uint32_t w = g->s[l], bits = vr_gts_s9_bits(w >> 28), cnt = vr_gts_s9_count(w >> 28);
        for (uint32_t k = 0; k < cnt; ++k) {
            if (sbar[l] + k < un)
                d[sbar[l] + k] = vr_gts_s9_code(w, k, bits);
            else
                *err |= VR_GTS_ERR_S9COUNT;
        }
    }
    vr_gts_u_sum(u, d, un, 0); /* U_Scan: inclusive sum of unzigzag(D) */
done:
    free(sbar);
    free(d);
    return s;
}

/* The paper's V passes: INC_Scan (exclusive sum of INC bits into incscan), V_Kernel. */
static vr_status v_paper(uint32_t *v, const vr_gts *g, const uint32_t *u, uint32_t *err,
                         const char *what)
{
    const uint32_t vn = g->v_count;
    uint32_t *incscan = malloc((size_t)vn * sizeof *incscan);
    if (!incscan)
        return VR_ERROR(VR_ERR_OOM, "%s: out of memory for |V| = %u", what, vn);
    uint32_t run = 0;
    for (uint32_t j = 0; j < vn; ++j) {
        incscan[j] = run;
        run += vr_gts_bit(g->inc, j);
    }
    if (run != g->referenced_count)
        *err |= VR_GTS_ERR_INC;
    for (uint32_t j = 0; j < vn; ++j)
        v[j] = vr_gts_v_entry(vr_gts_bit(g->inc, j), incscan[j], j, u, g->u_count, err);
    free(incscan);
    return VR_OK;
}

/* The tiled V passes: VTile_Reduce (INC ones per tile of VR_GTS_VTILE entries, padding bits
 * of the last word masked), VTile_Scan (exclusive sum: every tile's carry), V_Tiled (per tile
 * the block scan of word popcounts from the carry, then each entry's ones before from its word).
 * No incscan array; the INC total is checked at the last entry, as V_Tiled does. */
static vr_status v_tiled(uint32_t *v, const vr_gts *g, const uint32_t *u, uint32_t *err,
                         const char *what)
{
    const uint32_t vn = g->v_count, words = vr_gts_inc_words(g), tiles = vr_gts_vtile_count(vn);
    uint32_t *count = malloc((size_t)tiles * sizeof *count);
    uint32_t *carry = malloc((size_t)tiles * sizeof *carry);
    vr_status s = VR_OK;
    if (!count || !carry) {
        s = VR_ERROR(VR_ERR_OOM, "%s: out of memory for %u V tiles", what, tiles);
        goto done;
    }
    /* VTile_Reduce */
    for (uint32_t t = 0; t < tiles; ++t) {
        count[t] = 0;
        for (uint32_t w = t * VR_GTS_VTILE_WORDS; w < (t + 1) * VR_GTS_VTILE_WORDS; ++w)
            count[t] += vr_popc(vr_gts_inc_word(g->inc, w, vn));
    }
    /* VTile_Scan */
    uint32_t run = 0;
    for (uint32_t t = 0; t < tiles; ++t) {
        carry[t] = run;
        run += count[t];
    }
    /* V_Tiled: `before` walks the tile's words as the block scan's exclusive prefix does */
    for (uint32_t t = 0; t < tiles; ++t) {
        uint32_t before = carry[t];
        for (uint32_t w = t * VR_GTS_VTILE_WORDS; w < (t + 1) * VR_GTS_VTILE_WORDS && w < words;
             ++w) {
            const uint32_t word = vr_gts_inc_word(g->inc, w, vn);
            for (uint32_t bit = 0; bit < 32 && 32 * w + bit < vn; ++bit) {
                const uint32_t j = 32 * w + bit, one = (word >> bit) & 1u;
                const uint32_t b = vr_gts_ones_before(before, word, bit);
                v[j] = vr_gts_v_entry(one, b, j, u, g->u_count, err);
                *err |= vr_gts_inc_total_err(j, vn, b + one, g->referenced_count);
            }
            before += vr_popc(word);
        }
    }
done:
    free(count);
    free(carry);
    return s;
}

/* T_Kernel's and T_Tiled's per-triangle work (vr_gts_tri_clamped), then the gather. */
static uint32_t emit_triangle(uint32_t *indices, const vr_gts *g, const uint32_t *v, uint32_t i,
                              uint32_t m, uint32_t q)
{
    uint32_t err = 0, p[3];
    vr_gts_tri_clamped(p, g->c, i, g->strip_triangle_count, g->restart == VR_GTS_RESTART_CODE, m,
                       q, g->v_count, &err);
    for (int j = 0; j < 3; ++j)
        indices[3 * (size_t)i + j] = v[p[j]];
    return err;
}

/* The paper's strip passes: M_Scan (R mode; M[i] = i + 2 in deg. mode), Q_Scan (inclusive max
 * scan of Eq. 8), T_Kernel. */
static vr_status t_paper(uint32_t *indices, const vr_gts *g, const uint32_t *v, uint32_t *err,
                         const char *what)
{
    const uint32_t n = g->strip_triangle_count, codes = g->restart == VR_GTS_RESTART_CODE;
    uint32_t *m = malloc((size_t)n * sizeof *m);
    uint32_t *q = malloc((size_t)n * sizeof *q);
    vr_status s = VR_OK;
    if (!m || !q) {
        s = VR_ERROR(VR_ERR_OOM, "%s: out of memory for %u triangles", what, n);
        goto done;
    }
    /* M_Scan */
    uint32_t run = 0;
    for (uint32_t i = 0; i < n; ++i) {
        run += i == 0 ? 2u : vr_gts_m_step(vr_gts_code_read(g->c, i, codes));
        m[i] = run;
    }
    /* Q_Scan */
    run = 0;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t val = 0;
        if (i > 0)
            val = vr_gts_q_value(vr_gts_code_read(g->c, i - 1, codes),
                                 vr_gts_code_read(g->c, i, codes), m[i]);
        run = val > run ? val : run;
        q[i] = run;
    }
    /* T_Kernel */
    for (uint32_t i = 0; i < n; ++i)
        *err |= emit_triangle(indices, g, v, i, m[i], q[i]);
done:
    free(m);
    free(q);
    return s;
}

/* One past the last triangle of the tile starting at `first` (the last tile may be short). */
static uint32_t tile_end(uint32_t first, uint32_t n)
{
    return n - first < VR_GTS_TILE ? n : first + VR_GTS_TILE;
}

/* The tiled strip passes: Tile_Reduce, Tile_Scan, T_Tiled (M and Q rebuilt per tile from its
 * carry, never stored). */
static vr_status t_tiled(uint32_t *indices, const vr_gts *g, const uint32_t *v, uint32_t *err,
                         const char *what)
{
    const uint32_t n = g->strip_triangle_count, codes = g->restart == VR_GTS_RESTART_CODE;
    const uint32_t tiles = vr_gts_tile_count(n);
    vr_gts_tile_agg *agg = malloc((size_t)tiles * sizeof *agg);
    vr_gts_tile_agg *carry = malloc((size_t)tiles * sizeof *carry);
    vr_status s = VR_OK;
    if (!agg || !carry) {
        s = VR_ERROR(VR_ERR_OOM, "%s: out of memory for %u triangles", what, n);
        goto done;
    }
    /* Tile_Reduce: one aggregate per tile */
    for (uint32_t t = 0; t < tiles; ++t) {
        const uint32_t first = t * VR_GTS_TILE, last = tile_end(first, n);
        vr_gts_tile_agg a = vr_gts_tile_empty();
        for (uint32_t i = first; i < last; ++i)
            a = vr_gts_tile_combine(a, vr_gts_tile_elem(g->c, i, codes));
        agg[t] = a;
    }
    /* Tile_Scan: exclusive, from the empty segment (M and Q before triangle 0 are 0 and none) */
    vr_gts_tile_agg run = vr_gts_tile_empty();
    for (uint32_t t = 0; t < tiles; ++t) {
        carry[t] = run;
        run = vr_gts_tile_combine(run, agg[t]);
    }
    /* T_Tiled: each tile rebuilds M and Q from its carry alone */
    for (uint32_t t = 0; t < tiles; ++t) {
        const uint32_t first = t * VR_GTS_TILE, last = tile_end(first, n);
        vr_gts_tile_agg prefix = carry[t];
        for (uint32_t i = first; i < last; ++i) {
            prefix = vr_gts_tile_combine(prefix, vr_gts_tile_elem(g->c, i, codes));
            *err |= emit_triangle(indices, g, v, i, prefix.sum, vr_gts_tile_q(prefix));
        }
    }
done:
    free(agg);
    free(carry);
    return s;
}

/* Both scan formulations, pass by pass: U (shared), V and the strips with the paper's passes
 * (tiled = 0) or the tiled ones. Every pass collects error bits; a malformed stream is reported
 * once at the end, as the GPU reports its device flag. */
static vr_status decode_scan(uint32_t *indices, const vr_gts *g, int tiled)
{
    const char *what = tiled ? "gts tiled decode" : "gts scan decode";
    vr_status s = vr_gts_validate_counts(g, what);
    if (s)
        return s;
    uint32_t *u = malloc(((size_t)g->u_count + 1) * sizeof *u);
    uint32_t *v = malloc((size_t)g->v_count * sizeof *v);
    uint32_t err = 0;
    if (!u || !v)
        s = VR_ERROR(VR_ERR_OOM, "%s: out of memory for |U| = %u, |V| = %u", what, g->u_count,
                     g->v_count);
    if (!s)
        s = scan_u(u, g, &err, what);
    if (!s)
        s = tiled ? v_tiled(v, g, u, &err, what) : v_paper(v, g, u, &err, what);
    if (!s)
        s = tiled ? t_tiled(indices, g, v, &err, what) : t_paper(indices, g, v, &err, what);
    if (!s && err)
        s = vr_gts_error_status(err, what);
    free(u);
    free(v);
    return s;
}

vr_status vr_gts_decode_scan_ref(uint32_t *indices, const vr_gts *g)
{
    assert(indices && g);
    return decode_scan(indices, g, 0);
}

vr_status vr_gts_decode_tiled_ref(uint32_t *indices, const vr_gts *g)
{
    assert(indices && g);
    return decode_scan(indices, g, 1);
}

vr_status vr_gts_decode_mesh(vr_mesh *out, const vr_gts *g)
{
    assert(out && g);
    memset(out, 0, sizeof *out);
    if ((uint64_t)g->strip_triangle_count * 3 > UINT32_MAX)
        return VR_ERROR(VR_ERR_OVERFLOW, "gts decode: %u strip triangles exceed a mesh's 32-bit "
                        "index count", g->strip_triangle_count);
    const size_t vc = g->vertex_count;
    out->vertex_count = g->vertex_count;
    out->index_count = 3 * g->strip_triangle_count;
    out->indices = malloc((size_t)out->index_count * sizeof *out->indices);
    out->positions = calloc(vc ? 3 * vc : 1, sizeof(float));
    out->normals = calloc(vc ? 3 * vc : 1, sizeof(float));
    if (g->texcoords)
        out->texcoords = malloc(2 * vc * sizeof(float));
    vr_status s = VR_OK;
    if (!out->indices || !out->positions || !out->normals || (g->texcoords && !out->texcoords))
        s = VR_ERROR(VR_ERR_OOM, "gts decode: out of memory for a mesh of %u vertices",
                     g->vertex_count);
    if (!s)
        s = vr_gts_decode_ref(out->indices, g);
    if (s) {
        void *const bufs[] = {out->indices, out->positions, out->normals, out->texcoords};
        vr_free_all(bufs, VR_COUNT_OF(bufs));
        memset(out, 0, sizeof *out);
        return s;
    }
    if (g->positions)
        memcpy(out->positions, g->positions, 3 * vc * sizeof(float));
    if (g->normals)
        memcpy(out->normals, g->normals, 3 * vc * sizeof(float));
    if (g->texcoords)
        memcpy(out->texcoords, g->texcoords, 2 * vc * sizeof(float));
    return VR_OK;
}

#ifndef VR_HAVE_CUDA
/* Builds without CUDA: the GPU entry points say so (callers fall back to the CPU decoder). */
vr_status vr_gts_gpu_create(vr_gts_gpu **out, const vr_gts *g)
{
    assert(out && g);
    *out = NULL;
    return VR_ERROR(VR_ERR_NO_DEVICE, "gts gpu: this build has no CUDA (configure with nvcc and "
                    "-DVR_CUDA=ON)");
}

void vr_gts_gpu_set_strip_pass(vr_gts_gpu *d, vr_gts_strip_pass p) { (void)d, (void)p; }

vr_status vr_gts_gpu_decode(vr_gts_gpu *d, vr_gts_gpu_timing *timing, int breakdown)
{
    (void)d, (void)timing, (void)breakdown;
    return VR_ERROR(VR_ERR_NO_DEVICE, "gts gpu: this build has no CUDA");
}

vr_status vr_gts_gpu_download(uint32_t *indices, const vr_gts_gpu *d)
{
    (void)indices, (void)d;
    return VR_ERROR(VR_ERR_NO_DEVICE, "gts gpu: this build has no CUDA");
}

const uint32_t *vr_gts_gpu_device_indices(const vr_gts_gpu *d)
{
    (void)d;
    return NULL;
}

void vr_gts_gpu_destroy(vr_gts_gpu *d) { (void)d; }

vr_status vr_gts_decode_gpu(uint32_t *indices, const vr_gts *g, vr_gts_gpu_timing *timing)
{
    (void)indices, (void)timing;
    vr_gts_gpu *d = NULL;
    return vr_gts_gpu_create(&d, g);
}
#endif
