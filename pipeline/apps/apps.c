/* apps.c - Loop subdivision, the random walk and simplification envelopes through the general
 * reuse API: the batches or plan each strategy needs, then the GPU program (apps_gpu.cu) or the
 * CPU twin with the same per-element and per-primitive functions (loop_math.h, walk_math.h,
 * envelope_math.h), so both give the reference's bits. Try: `vreuse_tests apps/program`.
 */
#include "pipeline/apps/apps.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/apps/loop_math.h"
#include "reuse/patches.h"
#include "scenes/scene_internal.h" /* vr_compute_normals */

/* ---- Loop ---------------------------------------------------------------------------------- */

typedef struct loop_user {
    const float *p;              /* old positions */
    const vr_loop_topology *t;   /* edge_of_half and tri_edges by stream position */
    vr_mesh *out;
} loop_user;

/* element: the vertex rule into out (the same value from every batch), the old position back */
static void loop_element(void *user, uint32_t v, void *el)
{
    const loop_user *u = user;
    vr_loop_vertex_rule(u->out->positions + 3 * (size_t)v, u->p, v, u->t->ring_start, u->t->ring,
                        u->t->beta);
    memcpy(el, u->p + 3 * (size_t)v, 3 * sizeof(float));
}

/* primitive: the edge points this triangle owns (first occurrence), and its 4 children at its
 * source id (every strategy writes the same mesh) */
static void loop_primitive(void *user, uint32_t tri, uint32_t pos, const uint32_t *ids,
                           const void *const *el)
{
    const loop_user *u = user;
    const vr_loop_topology *t = u->t;
    const float *const a[3] = {el[0], el[1], el[2]};
    vr_loop_owned_edges(u->out->positions, u->p, pos, ids, a, t->edge_of_half, t->tri_edges,
                        t->edge_opp, t->vertex_count);
    vr_loop_children(u->out->indices + 12 * (size_t)tri, ids, t->edge_of_half, pos,
                     t->vertex_count);
}

static void loop_rows_free(vr_loop_topology *rows, const vr_loop_topology *t)
{
    if (rows->edge_of_half != t->edge_of_half)
        free(rows->edge_of_half);
    if (rows->tri_edges != t->tri_edges)
        free(rows->tri_edges);
}

/* A plan's batches visit source triangles out of order; Loop's per-triangle rows (edge_of_half,
 * tri_edges) are laid out in the plan's stream order once, with the plan, so that a batch reads
 * them where it reads its indices (the primitive takes its row by stream position). *rows is a
 * shallow copy of t with those two arrays its own (loop_rows_free); without a plan, t itself. */
static vr_status loop_rows_in_stream_order(vr_loop_topology *rows, const vr_loop_topology *t,
                                           const uint32_t *tri_order)
{
    *rows = *t;
    if (!tri_order)
        return VR_OK;
    const size_t n = t->index_count / 3;
    rows->edge_of_half = malloc((n ? 3 * n : 1) * sizeof *rows->edge_of_half);
    rows->tri_edges = malloc(n ? n : 1);
    if (!rows->edge_of_half || !rows->tri_edges) {
        free(rows->edge_of_half), free(rows->tri_edges);
        *rows = *t;
        return VR_ERROR(VR_ERR_OOM, "Loop's rows of %zu triangles in plan order", n);
    }
    for (size_t pos = 0; pos < n; ++pos) {
        const size_t tri = tri_order[pos]; /* a permutation from our builders; range-checked */
        if (tri >= n) {
            loop_rows_free(rows, t);
            *rows = *t;
            return VR_ERROR(VR_ERR_ARG, "plan entry %zu names triangle %zu of %zu", pos, tri, n);
        }
        rows->tri_edges[pos] = t->tri_edges[tri];
        for (int k = 0; k < 3; ++k)
            rows->edge_of_half[3 * pos + k] = t->edge_of_half[3 * tri + k];
    }
    return VR_OK;
}

/* The stream a strategy reads: the mesh's own indices, or a plan's (patch, meshlet) with its
 * tri_order and starts; dynamic batches for hash, phash, sort. Arrays malloc'd in *s. */
typedef struct app_stream {
    uint32_t *indices;  /* plan-ordered copy, or NULL (the input's) */
    uint32_t *starts;
    uint32_t batch_count;
    vr_batch_plan plan;
} app_stream;

static void app_stream_free(app_stream *s)
{
    free(s->indices), free(s->starts);
    vr_batch_plan_free(&s->plan);
    memset(s, 0, sizeof *s);
}

static vr_status app_stream_make(app_stream *s, vr_reuse_kind kind, const vr_mesh *m,
                                 const uint32_t *indices, uint32_t index_count, uint32_t arity,
                                 uint32_t element_count, const vr_batch_limits *l)
{
    memset(s, 0, sizeof *s);
    vr_status st = VR_OK;
    if (vr_program_dynamic(kind))
        return vr_program_batches(&s->starts, &s->batch_count, indices, index_count, arity,
                                  element_count, l->max_unique, l->max_indices);
    if (!vr_program_planned(kind))
        return VR_OK;
    if (!m || arity != 3)
        return VR_ERROR(VR_ERR_ARG, "%s batches a triangle mesh by a static plan; this "
                        "application has no mesh", vr_reuse_all[kind].name);
    if ((st = vr_reuse_all[kind].plan(&s->plan, m, l->max_unique, l->max_indices,
                                      VR_PATCH_BUILDER_CPU)) != VR_OK)
        return st;
    s->indices = malloc((size_t)(index_count ? index_count : 1) * sizeof *s->indices);
    if (!s->indices) {
        app_stream_free(s);
        return VR_ERROR(VR_ERR_OOM, "plan-ordered copy of %u indices", index_count);
    }
    vr_batch_plan_indices(s->indices, &s->plan, indices);
    s->batch_count = s->plan.batch_count;
    return VR_OK;
}

static vr_program_params app_params(const vr_app_run *r, const app_stream *s,
                                    const uint32_t *indices, uint32_t index_count, uint32_t arity,
                                    uint32_t element_count, vr_program_counters *c)
{
    vr_program_params p;
    memset(&p, 0, sizeof p);
    p.indices = s->indices ? s->indices : indices;
    p.index_count = index_count;
    p.arity = arity;
    p.element_count = element_count;
    p.batch_starts = s->plan.starts ? s->plan.starts : s->starts;
    p.batch_count = s->batch_count;
    p.prim_ids = s->plan.tri_order;
    p.limits = r->limits;
    p.count = r->count;
    p.counters = c;
    return p;
}

vr_batch_limits vr_loop_paper_limits(vr_reuse_kind kind)
{
    vr_batch_limits l = vr_program_limits_default(3);
    l.batch_indices = 96;
    if (kind == VR_REUSE_NAIVE) {
        l.block_size = 32;
    } else if (kind == VR_REUSE_WARP) {
        l.block_size = 64;
    } else if (kind == VR_REUSE_HASH || kind == VR_REUSE_PHASH) {
        l.block_size = 64, l.max_unique = 64, l.max_indices = 192;
    } else { /* sort, and multi, patch, meshlet */
        l.block_size = 256, l.max_unique = 256, l.max_indices = 768;
    }
    return l;
}

vr_batch_limits vr_envelope_paper_limits(vr_reuse_kind kind)
{
    vr_batch_limits l = vr_program_limits_default(3);
    l.batch_indices = 96;
    l.block_size = 128, l.max_unique = 128, l.max_indices = 768;
    if (kind == VR_REUSE_NAIVE)
        l.block_size = 32;
    else if (kind == VR_REUSE_WARP)
        l.block_size = 64;
    else if (kind == VR_REUSE_HASH)
        l.max_indices = 576;
    return l;
}

vr_status vr_loop_apply(vr_mesh *out, const vr_mesh *in, const vr_app_run *r, int gpu,
                        vr_app_report *rep)
{
    assert(out && in && r);
    memset(out, 0, sizeof *out);
    vr_app_report rp;
    memset(&rp, 0, sizeof rp);
    vr_loop_topology t;
    vr_status st = vr_loop_topology_build(&t, in, NULL);
    if (st)
        return st;
    app_stream s;
    double t0 = vr_now_ms();
    if ((st = app_stream_make(&s, r->kind, in, in->indices, in->index_count, 3, in->vertex_count,
                              &r->limits))) {
        vr_loop_topology_free(&t);
        return st;
    }
    vr_loop_topology rows;
    if ((st = loop_rows_in_stream_order(&rows, &t, s.plan.tri_order))) {
        app_stream_free(&s);
        vr_loop_topology_free(&t);
        return st;
    }
    rp.prep_ms = vr_now_ms() - t0;
    rp.batches = s.batch_count;
    if (gpu) {
        st = vr_loop_apply_gpu(out, in, &rows, r, s.plan.tri_order, s.indices,
                               s.plan.starts ? s.plan.starts : s.starts, s.batch_count, &rp);
    } else if ((st = vr_loop_output_alloc(out, &t)) == VR_OK) {
        vr_loop_output_prefill(out, in);
        loop_user u = {in->positions, &rows, out};
        const vr_program_cpu f = {3 * sizeof(float), loop_element, loop_primitive, &u};
        const vr_program_params p = app_params(r, &s, in->indices, in->index_count, 3,
                                               in->vertex_count, &rp.counters);
        t0 = vr_now_ms();
        st = vr_program_ref(r->kind, &p, &f);
        rp.ms = vr_now_ms() - t0;
    }
    if (st == VR_OK)
        vr_compute_normals(out->normals, out);
    else
        vr_mesh_free(out);
    loop_rows_free(&rows, &t);
    app_stream_free(&s);
    vr_loop_topology_free(&t);
    if (rep)
        *rep = rp;
    return st;
}

/* ---- random walk --------------------------------------------------------------------------- */

typedef struct walk_user {
    const float *activity, *levy;
    const uint32_t *agent_of; /* the agent of each primitive (stream position); NULL: itself */
    uint32_t *next;           /* dense cells after the step, by primitive */
    uint32_t step;
    uint64_t seed;
} walk_user;

static void walk_element(void *user, uint32_t dense, void *el)
{
    const walk_user *u = user;
    vr_walk_moves_of(el, u->activity, u->levy, vr_walk_packed(dense));
}

static void walk_primitive(void *user, uint32_t prim, uint32_t pos, const uint32_t *ids,
                           const void *const *el)
{
    (void)pos, (void)ids;
    const walk_user *u = user;
    const uint32_t agent = u->agent_of ? u->agent_of[prim] : prim;
    u->next[prim] = vr_walk_dense(vr_walk_draw(el[0], agent, u->step, u->seed));
}

void vr_walk_sort_by_cell(uint32_t *cells_out, uint32_t *agents_out, const uint32_t *cells,
                          const uint32_t *agents, uint32_t count, uint32_t *histogram)
{
    const uint32_t grid = VR_WALK_GRID * VR_WALK_GRID;
    memset(histogram, 0, grid * sizeof *histogram);
    for (uint32_t i = 0; i < count; ++i)
        histogram[cells[i]]++;
    uint32_t sum = 0;
    for (uint32_t c = 0; c < grid; ++c) {
        const uint32_t n = histogram[c];
        histogram[c] = sum;
        sum += n;
    }
    for (uint32_t i = 0; i < count; ++i) { /* in stream order: stable */
        const uint32_t at = histogram[cells[i]]++;
        cells_out[at] = cells[i];
        agents_out[at] = agents[i];
    }
}

vr_status vr_walk_apply(uint32_t *cells, const vr_walk_config *cfg, const vr_app_run *r, int gpu,
                        vr_app_report *rep)
{
    assert(cells && cfg && r);
    vr_status st = vr_walk_check(cells, cfg);
    if (st)
        return st;
    if (vr_program_planned(r->kind))
        return VR_ERROR(VR_ERR_ARG, "random walk: %s needs a triangle mesh; the walk's stream is "
                        "one cell per agent", vr_reuse_all[r->kind].name);
    if (gpu)
        return vr_walk_apply_gpu(cells, cfg, r, rep);
    vr_app_report rp;
    memset(&rp, 0, sizeof rp);
    const size_t grid = (size_t)VR_WALK_GRID * VR_WALK_GRID;
    const size_t n = cfg->agents;
    float *activity = malloc(grid * sizeof *activity);
    float levy[(2 * VR_WALK_MAX_DISTANCE + 1) * (2 * VR_WALK_MAX_DISTANCE + 1)];
    uint32_t *cur = malloc(n * sizeof *cur), *next = malloc(n * sizeof *next);
    /* with resort: the agent at each position, the sort's outputs and its histogram */
    uint32_t *agent_of = NULL, *sorted = NULL, *sorted_agents = NULL, *histogram = NULL;
    if (cfg->resort) {
        agent_of = malloc(n * sizeof *agent_of), sorted = malloc(n * sizeof *sorted);
        sorted_agents = malloc(n * sizeof *sorted_agents);
        histogram = malloc(grid * sizeof *histogram);
    }
    if (!activity || !cur || !next ||
        (cfg->resort && (!agent_of || !sorted || !sorted_agents || !histogram))) {
        st = VR_ERROR(VR_ERR_OOM, "random walk: tables for %u agents", cfg->agents);
        goto done;
    }
    vr_walk_activity_table(activity);
    vr_walk_levy_table(levy);
    for (uint32_t a = 0; a < cfg->agents; ++a)
        cur[a] = vr_walk_dense(cells[a]);
    if (agent_of)
        for (uint32_t a = 0; a < cfg->agents; ++a)
            agent_of[a] = a;
    for (uint32_t step = 0; step < cfg->steps && st == VR_OK; ++step) {
        double t0 = vr_now_ms();
        if (cfg->resort) { /* timed with the step, as on the GPU */
            vr_walk_sort_by_cell(sorted, sorted_agents, cur, agent_of, cfg->agents, histogram);
            uint32_t *t = cur;
            cur = sorted, sorted = t;
            t = agent_of, agent_of = sorted_agents, sorted_agents = t;
            const double sort_ms = vr_now_ms() - t0;
            rp.ms += sort_ms, rp.order_ms += sort_ms;
        }
        app_stream s;
        t0 = vr_now_ms();
        if ((st = app_stream_make(&s, r->kind, NULL, cur, cfg->agents, 1, (uint32_t)grid,
                                  &r->limits)))
            break;
        rp.prep_ms += vr_now_ms() - t0;
        rp.batches = s.batch_count;
        walk_user u = {activity, levy, agent_of, next, step, cfg->seed};
        const vr_program_cpu f = {sizeof(vr_walk_moves), walk_element, walk_primitive, &u};
        const vr_program_params p = app_params(r, &s, cur, cfg->agents, 1, (uint32_t)grid,
                                               &rp.counters);
        t0 = vr_now_ms();
        st = vr_program_ref(r->kind, &p, &f);
        rp.ms += vr_now_ms() - t0;
        app_stream_free(&s);
        uint32_t *tmp = cur;
        cur = next, next = tmp;
    }
    if (st == VR_OK)
        for (uint32_t i = 0; i < cfg->agents; ++i)
            cells[agent_of ? agent_of[i] : i] = vr_walk_packed(cur[i]);
    if (cfg->steps)
        rp.ms /= cfg->steps, rp.order_ms /= cfg->steps;
done:
    free(activity), free(cur), free(next);
    free(agent_of), free(sorted), free(sorted_agents), free(histogram);
    if (rep)
        *rep = rp;
    return st;
}

/* ---- simplification envelopes -------------------------------------------------------------- */

/* Why every vertex gets vr_envelope_build's bits: the reference sets out[v] = move(w, off[w]) with
 * w = weld[v] and off[w] = vr_envelope_offset(w) (w is its own representative). The element
 * function of vertex v evaluates exactly that - the same pure VR_HD functions of the same
 * prepared input and the same w - so whichever batch (or how many) shades v, and whether v is w
 * or a welded copy of it, the bits agree; envelope_math.h rounds each operation once
 * (VR_FMUL/VR_FADD, correctly rounded / and sqrtf on both sides). */
typedef struct env_user {
    const vr_envelope_prep *p;
    float *positions; /* 3 x vertex_count: the moved positions */
    float *offsets;   /* vertex_count: each vertex's offset (its representative's) */
} env_user;

static void env_element(void *user, uint32_t v, void *el)
{
    const env_user *u = user;
    const uint32_t w = u->p->weld[v];
    const float d = vr_envelope_offset(&u->p->input, w);
    vr_envelope_move(u->positions + 3 * (size_t)v, &u->p->input, w, d);
    u->offsets[v] = d;
    memcpy(el, &d, sizeof d);
}

/* the paper's per-triangle work is nil: the triangles keep their corners */
static void env_primitive(void *user, uint32_t tri, uint32_t pos, const uint32_t *ids,
                          const void *const *el)
{
    (void)user, (void)tri, (void)pos, (void)ids, (void)el;
}

/* Vertices the index buffer does not name (only multi shades them): the reference's value,
 * move(w, off[w]) - the bits of any named vertex u welded to the same point, whose output the
 * program wrote, or, when no named vertex is welded there, move(w, 0) (w is on no triangle, its
 * offset is 0). */
static vr_status env_unnamed(float *pos, float *off, const vr_mesh *in, const vr_envelope_prep *p)
{
    const uint32_t vc = in->vertex_count;
    uint32_t *named = malloc((size_t)vc * sizeof *named); /* per representative: a named vertex */
    unsigned char *is_named = calloc(vc, 1);
    if (!named || !is_named) {
        free(named), free(is_named);
        return VR_ERROR(VR_ERR_OOM, "envelope: cannot allocate the vertex marks of %u vertices",
                        vc);
    }
    memset(named, 0xFF, (size_t)vc * sizeof *named);
    for (uint32_t i = 0; i < in->index_count; ++i) {
        is_named[in->indices[i]] = 1;
        named[p->weld[in->indices[i]]] = in->indices[i];
    }
    for (uint32_t v = 0; v < vc; ++v) {
        if (is_named[v])
            continue;
        const uint32_t w = p->weld[v], u = named[w];
        if (u != UINT32_MAX) {
            memcpy(pos + 3 * (size_t)v, pos + 3 * (size_t)u, 3 * sizeof *pos);
            off[v] = off[u];
        } else {
            vr_envelope_move(pos + 3 * (size_t)v, &p->input, w, 0.0f);
            off[v] = 0.0f;
        }
    }
    free(named), free(is_named);
    return VR_OK;
}

vr_status vr_envelope_apply(vr_mesh *out, const vr_mesh *in, const vr_envelope_config *cfg,
                            const vr_app_run *r, int gpu, vr_app_report *rep,
                            vr_envelope_stats *stats)
{
    assert(out && in && cfg && r);
    vr_app_report rp;
    vr_envelope_stats es;
    vr_envelope_prep p;
    memset(&rp, 0, sizeof rp);
    vr_status st = vr_envelope_start(&p, out, &es, stats, in, cfg);
    if (st)
        return st;
    double t0 = vr_now_ms();
    app_stream s;
    if ((st = app_stream_make(&s, r->kind, in, in->indices, in->index_count, 3, in->vertex_count,
                              &r->limits))) {
        vr_envelope_prep_free(&p);
        return st;
    }
    rp.prep_ms = es.prepare_ms + (vr_now_ms() - t0);
    rp.batches = s.batch_count;
    const uint32_t vc = in->vertex_count;
    float *off = malloc((size_t)vc * sizeof *off);
    if (!off)
        st = VR_ERROR(VR_ERR_OOM, "envelope: cannot allocate %u offsets", vc);
    else
        st = vr_mesh_copy(out, in);
    if (st == VR_OK) {
        /* poisoned (NaN): a vertex the program should have written and did not fails the
         * comparison with the reference */
        memset(out->positions, 0xFF, 3 * (size_t)vc * sizeof *out->positions);
        memset(off, 0xFF, (size_t)vc * sizeof *off);
        const vr_program_params pp = app_params(r, &s, in->indices, in->index_count, 3, vc,
                                                &rp.counters);
        if (gpu) {
            st = vr_envelope_apply_gpu(out->positions, off, &p, r, pp.indices, pp.prim_ids,
                                       pp.batch_starts, pp.batch_count, &rp);
        } else {
            env_user u = {&p, out->positions, off};
            const vr_program_cpu f = {sizeof(float), env_element, env_primitive, &u};
            t0 = vr_now_ms();
            st = vr_program_ref(r->kind, &pp, &f);
            rp.ms = vr_now_ms() - t0;
        }
        es.offsets_ms = rp.ms;
    }
    if (st == VR_OK)
        st = env_unnamed(out->positions, off, in, &p);
    if (st == VR_OK) {
        vr_envelope_tally(&es, &p, off);
        st = vr_envelope_normals(out);
    }
    if (st == VR_OK && cfg->check)
        st = vr_envelope_check(&es, in, out, &p);
    if (st != VR_OK)
        vr_mesh_free(out);
    else if (stats)
        *stats = es;
    free(off);
    app_stream_free(&s);
    vr_envelope_prep_free(&p);
    if (rep)
        *rep = rp;
    return st;
}

#ifndef VR_HAVE_CUDA
vr_status vr_loop_apply_gpu(vr_mesh *out, const vr_mesh *in, const vr_loop_topology *t,
                            const vr_app_run *r, const uint32_t *plan_ids,
                            const uint32_t *plan_indices, const uint32_t *starts,
                            uint32_t batch_count, vr_app_report *rep)
{
    (void)out, (void)in, (void)t, (void)r, (void)plan_ids, (void)plan_indices, (void)starts;
    (void)batch_count, (void)rep;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_walk_apply_gpu(uint32_t *cells, const vr_walk_config *cfg, const vr_app_run *r,
                            vr_app_report *rep)
{
    (void)cells, (void)cfg, (void)r, (void)rep;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}

vr_status vr_envelope_apply_gpu(float *positions, float *offsets, const vr_envelope_prep *prep,
                                const vr_app_run *r, const uint32_t *stream,
                                const uint32_t *plan_ids, const uint32_t *starts,
                                uint32_t batch_count, vr_app_report *rep)
{
    (void)positions, (void)offsets, (void)prep, (void)r, (void)stream, (void)plan_ids;
    (void)starts, (void)batch_count, (void)rep;
    return VR_ERROR(VR_ERR_NO_DEVICE, VR_NO_CUDA_BUILD);
}
#endif
