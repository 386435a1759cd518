/* precheck.c - a bounded look at a scene file before assimp parses it (vr_precheck_file, called
 * by load_assimp.c). Try: `vreuse_tests scenes/assimp-`, `vreuse info model.gltf`.
 *
 * Why a pre-parse. assimp believes what a file declares and recurses as deep as a file nests:
 * a 30,000-level node chain overflows its stack (glTF, Collada, X3D, X, FBX ...), a glTF node
 * listed twice as a child doubles the scene per level (1 KB -> 2.8 GB), a GLB chunk length or an
 * OFF header count is allocated before it is checked against the bytes that follow, and a corrupt
 * JSON file gets "No suitable reader found". None of that can be caught once aiImportFile runs,
 * and the design card allows no new library, so this file reads just enough of the formats that
 * carry such declarations, with its own iterative parsers (explicit stacks, bounded depth):
 *   GLB    header and chunk lengths against the file size, then its JSON chunk as below;
 *   glTF   a JSON tokenizer (syntax errors name the byte, line and column; nesting <= 512), then
 *          the node graph: child and mesh references, cycles, the deepest path, and node
 *          instances, draws and triangles with shared children expanded - counted on the DAG in
 *          topological order with saturating arithmetic, never expanded; accessors without data;
 *   Collada  an XML tag scanner (streamed): <node> nesting, <instance_node> references (the same
 *          DAG counts; a cycle would make assimp recurse forever), geometry triangle counts;
 *   FBX    binary record nesting; other XML and bracketed text (X3D, X, FBX ascii, ...): the
 *          element or bracket nesting;
 *   OBJ    distinct `o` and `usemtl` names (assimp looks each up among all before it: quadratic),
 *          mesh-starting lines, declared triangles (compared with what assimp delivers), faces
 *          with fewer than 3 corners (assimp's validation fails on them);
 *   OFF    header counts against the bytes after the header.
 * Limits (scene_internal.h): 1024 node levels, as the walk in load_assimp.c; 2^20 node instances
 * (an aiNode is ~1.1 KB: ~1.1 GB) and 2^20 draws; triangles up to the 2^32-1 index limit of a
 * vr_mesh, so an accepted file fits; 4096 nested elements or brackets (no real file nests more
 * than ~50; assimp's readers need at most a few KB per level, far inside the 256 MB import
 * stack); OBJ: 16,384 distinct objects (0.7 s in assimp; 30,000 take 2.2 s, 100,000 minutes) and
 * 4,096 distinct materials (0.3 s and 175 MB; 30,000 take 8 s and 1 GB), measured with 5.2.5.
 * Cost: one streamed pass (a JSON document is read whole, as assimp does; 20 bytes per token),
 * about 5% of the load time of an OBJ. Binary formats other than GLB and FBX are not pre-parsed:
 * the import thread's stack (~200,000 levels) and the walk's depth check are their bounds.
 */
#define _POSIX_C_SOURCE 200809L
#include "scenes/scene_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define NONE UINT32_MAX
#define JSON_MAX_DEPTH 512u /* glTF itself nests about 6 deep; "extras" may nest more */
/* A glTF accessor without a bufferView is zeros (plus sparse values): nothing in the file backs
 * its size, and assimp allocates count x element size for it (2e9 VEC3 = 24 GB from 1 KB). */
#define GLTF_MAX_UNBACKED_ELEMENTS (1u << 24)

/* ---- saturating counts ------------------------------------------------------------------ */

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    if (a == 0 || b == 0)
        return 0;
    return a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* ---- growable arrays -------------------------------------------------------------------- */

/* Makes room for element `n` in the array whose pointer is at `arr_ptr` (capacity *cap);
 * 0 when out of memory. The pointer is read and written with memcpy: it may be any T *. */
static int grow(void *arr_ptr, uint32_t *cap, uint32_t n, size_t elem)
{
    if (n < *cap)
        return 1;
    if (n >= NONE - 1)
        return 0;
    uint64_t c = *cap ? (uint64_t)*cap * 2 : 64;
    if (c >= NONE)
        c = NONE - 1;
    void *old;
    memcpy(&old, arr_ptr, sizeof old);
    void *p = realloc(old, (size_t)c * elem);
    if (!p)
        return 0;
    memcpy(arr_ptr, &p, sizeof p);
    *cap = (uint32_t)c;
    return 1;
}

#define GROW(arr, cap, n) grow(&(arr), &(cap), (n), sizeof *(arr))

/* ---- strings by hash ------------------------------------------------------------------------ */

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; ++i)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* An open-addressing map from byte strings (offset + length into a caller's buffer) to values;
 * lookups pass the buffer, so it may move between inserts and lookups. The first insert of a key
 * wins (a first-match search), or with strmap_set the last (std::map assignment). */
typedef struct strmap {
    uint64_t *hash;
    uint32_t *off, *len, *val;
    uint32_t cap, count; /* cap: a power of two, at most half full */
} strmap;

static void strmap_free(strmap *m)
{
    free(m->hash), free(m->off), free(m->len), free(m->val);
    memset(m, 0, sizeof *m);
}

static int strmap_init(strmap *m, uint32_t expected)
{
    memset(m, 0, sizeof *m);
    uint32_t cap = 16;
    while (cap < 2ull * expected + 2 && cap < (1u << 31))
        cap *= 2;
    m->hash = malloc(cap * sizeof *m->hash);
    m->off = malloc(cap * sizeof *m->off);
    m->len = malloc(cap * sizeof *m->len);
    m->val = malloc(cap * sizeof *m->val);
    if (!m->hash || !m->off || !m->len || !m->val) {
        strmap_free(m);
        return 0;
    }
    for (uint32_t i = 0; i < cap; ++i)
        m->val[i] = NONE;
    m->cap = cap;
    return 1;
}

static uint32_t strmap_slot(const strmap *m, const char *base, const char *s, size_t n, uint64_t h)
{
    uint32_t i = (uint32_t)h & (m->cap - 1);
    while (m->val[i] != NONE &&
           !(m->hash[i] == h && m->len[i] == n && !memcmp(base + m->off[i], s, n)))
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* `m` was sized by strmap_init for every insert it gets. */
static void strmap_insert(strmap *m, const char *base, uint32_t off, uint32_t n, uint32_t val,
                          int overwrite)
{
    const uint64_t h = fnv1a(base + off, n);
    const uint32_t i = strmap_slot(m, base, base + off, n, h);
    if (m->val[i] != NONE) {
        if (overwrite)
            m->val[i] = val;
        return;
    }
    if (m->count + 1 > m->cap / 2)
        return;
    m->hash[i] = h, m->off[i] = off, m->len[i] = n, m->val[i] = val;
    ++m->count;
}

static void strmap_put(strmap *m, const char *base, uint32_t off, uint32_t n, uint32_t val)
{
    strmap_insert(m, base, off, n, val, 0);
}

static void strmap_set(strmap *m, const char *base, uint32_t off, uint32_t n, uint32_t val)
{
    strmap_insert(m, base, off, n, val, 1);
}

static uint32_t strmap_get(const strmap *m, const char *base, const char *s, size_t n)
{
    if (!m->cap)
        return NONE;
    return m->val[strmap_slot(m, base, s, n, fnv1a(s, n))];
}

/* A set of 64-bit name hashes (OBJ names): counts distinct names in memory proportional to them. */
typedef struct hashset {
    uint64_t *slot; /* 0 = empty (a zero hash is stored as 1) */
    uint32_t cap, count;
} hashset;

/* 1 when added, 0 when already there, -1 when out of memory */
static int hashset_add(hashset *s, uint64_t h)
{
    h = h ? h : 1;
    if (2ull * (s->count + 1) > s->cap) {
        uint32_t cap = s->cap ? s->cap * 2 : 1024;
        uint64_t *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return -1;
        for (uint32_t i = 0; i < s->cap; ++i)
            if (s->slot[i]) {
                uint32_t j = (uint32_t)s->slot[i] & (cap - 1);
                while (slot[j])
                    j = (j + 1) & (cap - 1);
                slot[j] = s->slot[i];
            }
        free(s->slot);
        s->slot = slot, s->cap = cap;
    }
    uint32_t j = (uint32_t)h & (s->cap - 1);
    while (s->slot[j]) {
        if (s->slot[j] == h)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->slot[j] = h;
    ++s->count;
    return 1;
}

/* ---- the node graph (glTF and Collada) ---------------------------------------------------- */

/* Nodes with per-node draws and triangles, child edges (a child listed twice is two edges) and
 * root entries (a root listed twice is two instances). */
typedef struct node_graph {
    uint32_t node_count, edge_count, from_cap, to_cap, root_count, root_cap;
    uint32_t *edge_from, *edge_to, *roots;
    uint64_t *draws, *tris; /* node_count each: what one instance of the node draws itself */
} node_graph;

static void graph_free(node_graph *g)
{
    free(g->edge_from), free(g->edge_to), free(g->roots), free(g->draws), free(g->tris);
    memset(g, 0, sizeof *g);
}

static int graph_init(node_graph *g, uint32_t nodes)
{
    memset(g, 0, sizeof *g);
    g->node_count = nodes;
    g->draws = calloc((size_t)nodes + 1, sizeof *g->draws);
    g->tris = calloc((size_t)nodes + 1, sizeof *g->tris);
    return g->draws && g->tris;
}

static int graph_edge(node_graph *g, uint32_t from, uint32_t to)
{
    if (!GROW(g->edge_from, g->from_cap, g->edge_count) || !GROW(g->edge_to, g->to_cap, g->edge_count))
        return 0;
    g->edge_from[g->edge_count] = from;
    g->edge_to[g->edge_count++] = to;
    return 1;
}

static int graph_root(node_graph *g, uint32_t node)
{
    if (!GROW(g->roots, g->root_cap, g->root_count))
        return 0;
    g->roots[g->root_count++] = node;
    return 1;
}

/* Depth (longest chain over all nodes: assimp reads every node, reachable or not), cycles, and
 * instance counts from the roots, in topological order (Kahn), iteratively and without expanding
 * anything. `names` says what a node is called in messages ("node", "Collada node"). */
static vr_status graph_analyze(vr_precheck *out, const node_graph *g, const char *path,
                               const char *names)
{
    const uint32_t n = g->node_count;
    vr_status st = VR_OK;
    uint32_t *first = calloc((size_t)n + 1, sizeof *first); /* CSR of child edges */
    uint32_t *child = malloc(((size_t)g->edge_count + 1) * sizeof *child);
    uint32_t *indegree = calloc((size_t)n + 1, sizeof *indegree);
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    uint32_t *depth = malloc(((size_t)n + 1) * sizeof *depth);
    uint64_t *mult = calloc((size_t)n + 1, sizeof *mult);
    if (!first || !child || !indegree || !order || !depth || !mult) {
        st = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the node graph check (%u nodes)", path, n);
        goto done;
    }
    for (uint32_t e = 0; e < g->edge_count; ++e)
        ++first[g->edge_from[e] + 1], ++indegree[g->edge_to[e]];
    for (uint32_t i = 0; i < n; ++i)
        first[i + 1] += first[i];
    {
        uint32_t *fill = order; /* borrowed as a cursor array until the sort below */
        memcpy(fill, first, (size_t)n * sizeof *fill);
        for (uint32_t e = 0; e < g->edge_count; ++e)
            child[fill[g->edge_from[e]]++] = g->edge_to[e];
    }
    uint32_t head = 0, tail = 0;
    for (uint32_t i = 0; i < n; ++i) {
        depth[i] = 1;
        if (indegree[i] == 0)
            order[tail++] = i;
    }
    for (uint32_t r = 0; r < g->root_count; ++r)
        mult[g->roots[r]] = sat_add(mult[g->roots[r]], 1);
    uint32_t max_depth = n ? 1 : 0;
    while (head < tail) {
        const uint32_t v = order[head++];
        for (uint32_t k = first[v]; k < first[v + 1]; ++k) {
            const uint32_t c = child[k];
            if (depth[v] + 1 > depth[c])
                depth[c] = depth[v] + 1;
            if (depth[c] > max_depth)
                max_depth = depth[c];
            mult[c] = sat_add(mult[c], mult[v]);
            if (--indegree[c] == 0)
                order[tail++] = c;
        }
    }
    if (tail < n) {
        uint32_t on_cycle = 0;
        while (on_cycle < n && indegree[on_cycle] == 0)
            ++on_cycle;
        st = VR_ERROR(VR_ERR_FORMAT,
                      "%s: %s %u is (or descends from) its own ancestor: the child references "
                      "form a cycle, which assimp would follow forever; the file is broken",
                      path, names, on_cycle);
        goto done;
    }
    out->depth = max_depth;
    if (max_depth > VR_SCENE_MAX_DEPTH) {
        st = VR_ERROR(VR_ERR_FORMAT,
                      "%s: node tree %u levels deep (limit %u): assimp's recursive import would "
                      "overflow its stack; flatten the hierarchy before loading",
                      path, max_depth, VR_SCENE_MAX_DEPTH);
        goto done;
    }
    uint64_t nodes = 0, draws = 0, tris = 0;
    for (uint32_t i = 0; i < n; ++i) {
        nodes = sat_add(nodes, mult[i]);
        draws = sat_add(draws, sat_mul(mult[i], g->draws[i]));
        tris = sat_add(tris, sat_mul(mult[i], g->tris[i]));
    }
    out->nodes = nodes, out->draws = draws, out->triangles = tris;
    /* a saturated count prints as 18446744073709551615: "at least" keeps it honest */
    if (nodes > VR_SCENE_MAX_NODES)
        st = VR_ERROR(VR_ERR_FORMAT,
                      "%s: %s%llu node instances once shared children are expanded (limit %u; "
                      "nodes listed as a child more than once multiply per level)",
                      path, nodes == UINT64_MAX ? "at least " : "", (unsigned long long)nodes,
                      VR_SCENE_MAX_NODES);
    else if (draws > VR_SCENE_MAX_DRAWS)
        st = VR_ERROR(VR_ERR_FORMAT,
                      "%s: %llu draws once node instances are expanded (limit %u)", path,
                      (unsigned long long)draws, VR_SCENE_MAX_DRAWS);
    else if (tris > VR_MAX_TRIANGLES)
        st = VR_ERROR(VR_ERR_FORMAT,
                      "%s: %s%llu triangles once node instances are expanded (mesh triangles x "
                      "instances; limit %u, the 2^32-1 index limit)",
                      path, tris == UINT64_MAX ? "at least " : "", (unsigned long long)tris,
                      VR_MAX_TRIANGLES);
done:
    free(first), free(child), free(indegree), free(order), free(depth), free(mult);
    return st;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

enum { J_OBJ, J_ARR, J_STR, J_NUM, J_LIT };

typedef struct json_tok {
    uint32_t start, end; /* byte range; a string's excludes its quotes */
    uint32_t size;       /* members of an object, elements of an array */
    uint32_t next;       /* the token after this value and everything inside it */
    uint8_t type;
} json_tok;

typedef struct json_doc {
    const char *text;
    uint32_t len;
    json_tok *tok;
    uint32_t count, cap;
} json_doc;

static void line_col(const char *text, uint32_t pos, uint32_t *line, uint32_t *col)
{
    *line = 1, *col = 1;
    for (uint32_t i = 0; i < pos; ++i)
        if (text[i] == '\n')
            ++*line, *col = 1;
        else
            ++*col;
}

static vr_status json_error(const json_doc *d, const char *path, const char *what, uint64_t base,
                            uint32_t pos, const char *expected)
{
    uint32_t line, col;
    line_col(d->text, pos, &line, &col);
    if (pos >= d->len)
        return VR_ERROR(VR_ERR_FORMAT,
                        "%s: %s syntax error at byte %llu (line %u, column %u): the document ends "
                        "early, %s; the file is truncated or not JSON",
                        path, what, (unsigned long long)(base + pos), line, col, expected);
    const unsigned char c = (unsigned char)d->text[pos];
    char shown[8];
    if (c >= 0x20 && c < 0x7f)
        snprintf(shown, sizeof shown, "'%c'", c);
    else
        snprintf(shown, sizeof shown, "0x%02x", c);
    return VR_ERROR(VR_ERR_FORMAT,
                    "%s: %s syntax error at byte %llu (line %u, column %u): %s, found %s",
                    path, what, (unsigned long long)(base + pos), line, col, expected, shown);
}

static uint32_t json_push(json_doc *d, uint8_t type, uint32_t start)
{
    if (!GROW(d->tok, d->cap, d->count))
        return NONE;
    json_tok *t = &d->tok[d->count];
    t->start = start, t->end = start, t->size = 0, t->next = d->count + 1, t->type = type;
    return d->count++;
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Scans the string starting at the quote at *pos; returns 0 and leaves *pos at the bad byte. */
static int json_string(const json_doc *d, uint32_t *pos)
{
    uint32_t p = *pos + 1;
    while (p < d->len) {
        const unsigned char c = (unsigned char)d->text[p];
        if (c == '"') {
            *pos = p + 1;
            return 1;
        }
        if (c < 0x20)
            break;
        if (c == '\\') {
            if (p + 1 >= d->len)
                break;
            const char e = d->text[p + 1];
            if (e == 'u') {
                for (int k = 2; k < 6; ++k)
                    if (p + k >= d->len || !isxdigit((unsigned char)d->text[p + k])) {
                        *pos = p + k;
                        return 0;
                    }
                p += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == 0) {
                p += 1;
                break;
            }
            p += 2;
            continue;
        }
        ++p;
    }
    *pos = p;
    return 0;
}

/* JSON number grammar; returns 0 and leaves *pos at the bad byte */
static int json_number(const json_doc *d, uint32_t *pos)
{
    uint32_t p = *pos;
    const char *t = d->text;
    const uint32_t n = d->len;
    if (p < n && t[p] == '-')
        ++p;
    if (p < n && t[p] == '0')
        ++p;
    else if (p < n && is_digit(t[p]))
        while (p < n && is_digit(t[p]))
            ++p;
    else
        goto bad;
    if (p < n && t[p] == '.') {
        ++p;
        if (!(p < n && is_digit(t[p])))
            goto bad;
        while (p < n && is_digit(t[p]))
            ++p;
    }
    if (p < n && (t[p] == 'e' || t[p] == 'E')) {
        ++p;
        if (p < n && (t[p] == '+' || t[p] == '-'))
            ++p;
        if (!(p < n && is_digit(t[p])))
            goto bad;
        while (p < n && is_digit(t[p]))
            ++p;
    }
    *pos = p;
    return 1;
bad:
    *pos = p;
    return 0;
}

/* Tokenizes d->text iteratively: containers on an explicit stack of at most JSON_MAX_DEPTH. */
static vr_status json_parse(json_doc *d, const char *path, const char *what, uint64_t base)
{
    uint32_t stack[JSON_MAX_DEPTH];
    uint32_t depth = 0, pos = 0;
    const char *t = d->text;
    const uint32_t n = d->len;
    if (n >= 3 && !memcmp(t, "\xEF\xBB\xBF", 3))
        return VR_ERROR(VR_ERR_FORMAT,
                        "%s: %s starts with a UTF-8 byte-order mark, which assimp's JSON reader "
                        "refuses; save it without one", path, what);
    enum { VALUE, KEY, AFTER } state = VALUE;
    for (;;) {
        while (pos < n && is_ws(t[pos]))
            ++pos;
        if (state == KEY) {
            /* after '{' or ',' inside an object: a key string, then ':' */
            if (pos >= n || t[pos] != '"')
                return json_error(d, path, what, base, pos, "expected a member name in quotes");
            const uint32_t k = json_push(d, J_STR, pos + 1);
            if (k == NONE)
                goto oom;
            if (!json_string(d, &pos))
                return json_error(d, path, what, base, pos, "expected a valid string");
            d->tok[k].end = pos - 1;
            while (pos < n && is_ws(t[pos]))
                ++pos;
            if (pos >= n || t[pos] != ':')
                return json_error(d, path, what, base, pos, "expected ':' after a member name");
            ++pos;
            state = VALUE;
            continue;
        }
        if (state == VALUE) {
            if (pos >= n)
                return json_error(d, path, what, base, pos, "expected a value");
            const char c = t[pos];
            if (c == '{' || c == '[') {
                if (depth == JSON_MAX_DEPTH)
                    return VR_ERROR(VR_ERR_FORMAT,
                                    "%s: %s nests more than %u levels at byte %llu (assimp's "
                                    "recursive JSON reader would overflow its stack)",
                                    path, what, JSON_MAX_DEPTH, (unsigned long long)(base + pos));
                const uint32_t k = json_push(d, c == '{' ? J_OBJ : J_ARR, pos);
                if (k == NONE)
                    goto oom;
                stack[depth++] = k;
                ++pos;
                while (pos < n && is_ws(t[pos]))
                    ++pos;
                if (pos < n && t[pos] == (c == '{' ? '}' : ']')) {
                    state = AFTER; /* empty container: closed below */
                    continue;
                }
                state = c == '{' ? KEY : VALUE;
                continue;
            }
            uint32_t k;
            if (c == '"') {
                k = json_push(d, J_STR, pos + 1);
                if (k == NONE)
                    goto oom;
                if (!json_string(d, &pos))
                    return json_error(d, path, what, base, pos, "expected a valid string");
                d->tok[k].end = pos - 1;
            } else if (c == '-' || is_digit(c)) {
                k = json_push(d, J_NUM, pos);
                if (k == NONE)
                    goto oom;
                if (!json_number(d, &pos))
                    return json_error(d, path, what, base, pos, "expected a valid number");
                d->tok[k].end = pos;
            } else {
                static const char *const lits[] = {"true", "false", "null"};
                int lit = -1;
                for (int i = 0; i < 3 && lit < 0; ++i)
                    if (n - pos >= strlen(lits[i]) && !memcmp(t + pos, lits[i], strlen(lits[i])))
                        lit = i;
                if (lit < 0)
                    return json_error(d, path, what, base, pos, "expected a value");
                k = json_push(d, J_LIT, pos);
                if (k == NONE)
                    goto oom;
                pos += (uint32_t)strlen(lits[lit]);
                d->tok[k].end = pos;
            }
            if (depth == 0)
                break;
            state = AFTER;
            continue;
        }
        /* AFTER: a value inside the container on top of the stack is complete */
        json_tok *top = &d->tok[stack[depth - 1]];
        const char close = top->type == J_OBJ ? '}' : ']';
        if (pos < n && t[pos] == close) {
            if (d->count > stack[depth - 1] + 1)
                ++top->size; /* the last member or element (none in an empty container) */
            top->end = ++pos;
            top->next = d->count;
            if (--depth == 0)
                break;
            continue; /* still AFTER: the closed container completes a value of its parent */
        }
        if (pos < n && t[pos] == ',') {
            ++top->size;
            ++pos;
            state = top->type == J_OBJ ? KEY : VALUE;
            continue;
        }
        return json_error(d, path, what, base, pos,
                          top->type == J_OBJ ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    while (pos < n && (is_ws(t[pos]) || t[pos] == 0))
        ++pos;
    if (pos < n)
        return json_error(d, path, what, base, pos, "expected the end of the document");
    return VR_OK;
oom:
    return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the %s tokens (%u so far)", path, what, d->count);
}

/* The value of member `key` of object token `obj`, or NONE. */
static uint32_t json_get(const json_doc *d, uint32_t obj, const char *key)
{
    if (obj == NONE || d->tok[obj].type != J_OBJ)
        return NONE;
    const size_t n = strlen(key);
    uint32_t k = obj + 1;
    for (uint32_t i = 0; i < d->tok[obj].size; ++i) {
        const json_tok *kt = &d->tok[k];
        if (kt->end - kt->start == n && !memcmp(d->text + kt->start, key, n))
            return k + 1;
        k = d->tok[k + 1].next;
    }
    return NONE;
}

/* A non-negative integer value (a JSON number without fraction or exponent). */
static int json_uint(const json_doc *d, uint32_t t, uint64_t *out)
{
    if (t == NONE || d->tok[t].type != J_NUM)
        return 0;
    uint64_t v = 0;
    for (uint32_t p = d->tok[t].start; p < d->tok[t].end; ++p) {
        if (!is_digit(d->text[p]))
            return 0;
        v = sat_add(sat_mul(v, 10), (uint64_t)(d->text[p] - '0'));
    }
    *out = v;
    return 1;
}

/* ---- glTF (1.0: objects keyed by id; 2.0: arrays indexed by number) ------------------------- */

/* One top-level collection ("nodes", "meshes", ...) as a list of element tokens, with ids. */
typedef struct gltf_list {
    const char *name;
    uint32_t count;
    uint32_t *elem; /* token of each element */
    strmap ids;     /* glTF 1.0: id -> element index */
} gltf_list;

static void gltf_list_free(gltf_list *l)
{
    free(l->elem);
    strmap_free(&l->ids);
}

static vr_status gltf_list_init(gltf_list *l, const json_doc *d, const char *name, const char *path)
{
    memset(l, 0, sizeof *l);
    l->name = name;
    const uint32_t c = json_get(d, 0, name);
    if (c == NONE || (d->tok[c].type != J_ARR && d->tok[c].type != J_OBJ))
        return VR_OK;
    const uint32_t n = d->tok[c].size;
    l->elem = malloc(((size_t)n + 1) * sizeof *l->elem);
    if (!l->elem || (d->tok[c].type == J_OBJ && !strmap_init(&l->ids, n)))
        return VR_ERROR(VR_ERR_OOM, "%s: cannot index %u glTF %s", path, n, name);
    uint32_t k = c + 1;
    for (uint32_t i = 0; i < n; ++i) {
        if (d->tok[c].type == J_OBJ) {
            strmap_put(&l->ids, d->text, d->tok[k].start, d->tok[k].end - d->tok[k].start, i);
            ++k; /* the value after the key */
        }
        l->elem[i] = k;
        k = d->tok[k].next;
    }
    l->count = n;
    return VR_OK;
}

/* A reference to an element of `l`: an index (2.0) or an id string (1.0). NONE when it names
 * nothing there. */
static uint32_t gltf_ref(const json_doc *d, const gltf_list *l, uint32_t t)
{
    if (t == NONE)
        return NONE;
    uint64_t i;
    if (json_uint(d, t, &i))
        return i < l->count && !l->ids.cap ? (uint32_t)i : NONE;
    if (d->tok[t].type == J_STR && l->ids.cap)
        return strmap_get(&l->ids, d->text, d->text + d->tok[t].start, d->tok[t].end - d->tok[t].start);
    return NONE;
}

static void ref_text(char *buf, size_t n, const json_doc *d, uint32_t t)
{
    const json_tok *k = &d->tok[t];
    const uint32_t len = k->end - k->start;
    snprintf(buf, n, "%s%.*s%s", k->type == J_STR ? "\"" : "", len > 40 ? 40 : (int)len,
             d->text + k->start, k->type == J_STR ? "\"" : "");
}

static vr_status gltf_bad_ref(const json_doc *d, const char *path, const char *where, uint32_t i,
                              const char *field, uint32_t t, const gltf_list *l)
{
    char shown[64];
    ref_text(shown, sizeof shown, d, t);
    return VR_ERROR(VR_ERR_FORMAT, "%s: %s %u: %s %s names no element of the %u %s; the file is broken",
                    path, where, i, field, shown, l->count, l->name);
}

/* Triangles one instance of each mesh declares, its primitive count, and what assimp will drop
 * on its own (an index count that is not a multiple of 3 loses its last 1 or 2). */
static vr_status gltf_meshes(const json_doc *d, const gltf_list *meshes, const gltf_list *accessors,
                             uint64_t *mesh_tris, uint64_t *mesh_prims, vr_precheck *out,
                             const char *path)
{
    uint64_t dropped_indices = 0, dropped_prims = 0, unindexed = 0;
    for (uint32_t m = 0; m < meshes->count; ++m) {
        const uint32_t prims = json_get(d, meshes->elem[m], "primitives");
        if (prims == NONE || d->tok[prims].type != J_ARR)
            continue;
        uint32_t p = prims + 1;
        for (uint32_t i = 0; i < d->tok[prims].size; ++i, p = d->tok[p].next) {
            ++mesh_prims[m];
            uint64_t mode = 4, count = 0;
            const uint32_t mode_tok = json_get(d, p, "mode");
            if (mode_tok != NONE && !json_uint(d, mode_tok, &mode))
                mode = 99;
            const uint32_t idx_tok = json_get(d, p, "indices");
            const uint32_t pos_tok = json_get(d, json_get(d, p, "attributes"), "POSITION");
            const uint32_t acc_tok = idx_tok != NONE ? idx_tok : pos_tok;
            const uint32_t acc = gltf_ref(d, accessors, acc_tok);
            if (acc_tok == NONE || acc == NONE || mode > 6 ||
                !json_uint(d, json_get(d, accessors->elem[acc], "count"), &count)) {
                out->exact = 0; /* assimp reports these itself */
                continue;
            }
            /* assimp computes strip and loop face counts as count - 2 (- 1) unchecked: a short
             * one wraps around and asks for 2^32 or 2^64 faces */
            const uint64_t least = mode == 2 || mode == 3 ? 2 : mode >= 5 ? 3 : 0;
            if (count < least) {
                static const char *const kinds[] = {"", "", "line loop", "line strip", "",
                                                    "triangle strip", "triangle fan"};
                return VR_ERROR(VR_ERR_FORMAT,
                                "%s: mesh %u primitive %u: a %s of %llu %s (needs at least "
                                "%llu); the file is broken",
                                path, m, i, kinds[mode], (unsigned long long)count,
                                idx_tok != NONE ? "indices" : "vertices", (unsigned long long)least);
            }
            if (mode < 4)
                continue; /* points and lines: nothing to draw */
            if (mode == 4) {
                mesh_tris[m] = sat_add(mesh_tris[m], count / 3);
                if (count % 3) {
                    dropped_indices += count % 3;
                    ++dropped_prims;
                    unindexed += idx_tok == NONE;
                }
            } else {
                mesh_tris[m] = sat_add(mesh_tris[m], count - 2);
            }
        }
    }
    if (dropped_prims) {
        out->repairs += dropped_prims;
        snprintf(out->repair_note, sizeof out->repair_note,
                 "assimp drops the last %llu %s of %llu primitive%s whose %s count is not a "
                 "multiple of 3",
                 (unsigned long long)dropped_indices,
                 unindexed == dropped_prims ? (dropped_indices == 1 ? "vertex" : "vertices")
                 : unindexed ? "indices or vertices" : dropped_indices == 1 ? "index" : "indices",
                 (unsigned long long)dropped_prims, dropped_prims == 1 ? "" : "s",
                 unindexed == dropped_prims ? "vertex" : unindexed ? "index or vertex" : "index");
    }
    return VR_OK;
}

/* The node references in array token `list` become edges from node `from`, or scene roots when
 * `from` is NONE; messages name the list's owner ("node 3", "scene 0") and the field. */
static vr_status gltf_node_refs(node_graph *g, uint32_t from, const json_doc *d, uint32_t list,
                                const gltf_list *nodes, const char *path, const char *owner,
                                uint32_t owner_index, const char *field)
{
    if (list == NONE || d->tok[list].type != J_ARR)
        return VR_OK;
    uint32_t t = list + 1;
    for (uint32_t k = 0; k < d->tok[list].size; ++k, t = d->tok[t].next) {
        const uint32_t j = gltf_ref(d, nodes, t);
        if (j == NONE)
            return gltf_bad_ref(d, path, owner, owner_index, field, t, nodes);
        if (!(from == NONE ? graph_root(g, j) : graph_edge(g, from, j)))
            return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the node graph", path);
    }
    return VR_OK;
}

static vr_status gltf_check(vr_precheck *out, json_doc *d, const char *path, const char *what,
                            uint64_t base)
{
    vr_status st = json_parse(d, path, what, base);
    if (st)
        return st;
    if (d->tok[0].type != J_OBJ)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %s is not a JSON object, so not glTF", path, what);
    const uint32_t version = json_get(d, json_get(d, 0, "asset"), "version");
    const int v2 = version != NONE && d->tok[version].type == J_STR &&
                   d->text[d->tok[version].start] == '2';
    out->exact = v2; /* assimp's glTF 1.0 importer is not compared triangle by triangle */

    gltf_list nodes = {0}, meshes = {0}, accessors = {0}, scenes = {0};
    node_graph g = {0};
    uint64_t *mesh_tris = NULL, *mesh_prims = NULL;
    if ((st = gltf_list_init(&nodes, d, "nodes", path)) ||
        (st = gltf_list_init(&meshes, d, "meshes", path)) ||
        (st = gltf_list_init(&accessors, d, "accessors", path)) ||
        (st = gltf_list_init(&scenes, d, "scenes", path)))
        goto done;
    mesh_tris = calloc((size_t)meshes.count + 1, sizeof *mesh_tris);
    mesh_prims = calloc((size_t)meshes.count + 1, sizeof *mesh_prims);
    if (!mesh_tris || !mesh_prims || !graph_init(&g, nodes.count)) {
        st = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the glTF check (%u nodes, %u meshes)", path,
                      nodes.count, meshes.count);
        goto done;
    }
    for (uint32_t a = 0; a < accessors.count; ++a) {
        uint64_t count;
        if (json_get(d, accessors.elem[a], "bufferView") == NONE &&
            json_uint(d, json_get(d, accessors.elem[a], "count"), &count) &&
            count > GLTF_MAX_UNBACKED_ELEMENTS) {
            st = VR_ERROR(VR_ERR_FORMAT,
                          "%s: accessor %u declares %llu elements without a bufferView (zeros and "
                          "sparse values, limit %u): nothing in the file backs that size",
                          path, a, (unsigned long long)count, GLTF_MAX_UNBACKED_ELEMENTS);
            goto done;
        }
    }
    if ((st = gltf_meshes(d, &meshes, &accessors, mesh_tris, mesh_prims, out, path)))
        goto done;
    for (uint32_t i = 0; i < nodes.count; ++i) {
        if ((st = gltf_node_refs(&g, i, d, json_get(d, nodes.elem[i], "children"), &nodes, path,
                                 "node", i, "child")))
            goto done;
        /* 2.0: "mesh": index; 1.0: "meshes": [ids] */
        const uint32_t mesh = json_get(d, nodes.elem[i], "mesh");
        const uint32_t mesh_list = json_get(d, nodes.elem[i], "meshes");
        const int listed = mesh == NONE && mesh_list != NONE && d->tok[mesh_list].type == J_ARR;
        const uint32_t first = mesh != NONE ? mesh : listed ? mesh_list + 1 : NONE;
        const uint32_t count = mesh != NONE ? 1 : listed ? d->tok[mesh_list].size : 0;
        uint32_t m_tok = first;
        for (uint32_t k = 0; k < count; ++k, m_tok = d->tok[m_tok].next) {
            const uint32_t m = gltf_ref(d, &meshes, m_tok);
            if (m == NONE) {
                st = gltf_bad_ref(d, path, "node", i, "mesh", m_tok, &meshes);
                goto done;
            }
            g.draws[i] = sat_add(g.draws[i], mesh_prims[m]);
            g.tris[i] = sat_add(g.tris[i], mesh_tris[m]);
        }
    }
    /* the scene assimp loads: "scene", else the first */
    uint32_t scene = scenes.count ? 0 : NONE;
    const uint32_t scene_tok = json_get(d, 0, "scene");
    if (scene_tok != NONE) {
        scene = gltf_ref(d, &scenes, scene_tok);
        if (scene == NONE) {
            st = gltf_bad_ref(d, path, "the document", 0, "scene", scene_tok, &scenes);
            goto done;
        }
    }
    if (scene != NONE && (st = gltf_node_refs(&g, NONE, d, json_get(d, scenes.elem[scene], "nodes"),
                                              &nodes, path, "scene", scene, "root node")))
        goto done;
    st = graph_analyze(out, &g, path, "node");
done:
    gltf_list_free(&nodes), gltf_list_free(&meshes), gltf_list_free(&accessors), gltf_list_free(&scenes);
    graph_free(&g);
    free(mesh_tris), free(mesh_prims);
    return st;
}

/* ---- streamed reading ------------------------------------------------------------------------- */

typedef struct reader {
    FILE *f;
    unsigned char *buf;
    size_t len, pos;
    uint64_t offset; /* file offset of buf[0] */
    int failed;
} reader;

#define READER_BYTES (1u << 16)

static int rd_fill(reader *r)
{
    r->offset += r->len;
    r->len = fread(r->buf, 1, READER_BYTES, r->f);
    r->pos = 0;
    if (r->len == 0 && ferror(r->f))
        r->failed = 1;
    return r->len > 0;
}

static inline int rd_getc(reader *r)
{
    if (r->pos == r->len && !rd_fill(r))
        return -1;
    return r->buf[r->pos++];
}

static inline uint64_t rd_tell(const reader *r) { return r->offset + r->pos; }

/* ---- XML: Collada node graph, or just the element nesting of any other XML format -------------- */

enum { X_OTHER, X_NODE, X_LIBNODES, X_VSCENE, X_GEOMETRY, X_PRIM, X_VCOUNT, X_CONTROLLER };

typedef struct xml_node {
    uint32_t id, id_len, name, name_len; /* in the string pool */
    uint32_t parent;                     /* enclosing node (a visual scene is a node too), or NONE */
    uint8_t library_top;                 /* a direct child of <library_nodes> */
    uint8_t is_scene;                    /* a <visual_scene> */
} xml_node;

typedef struct xml_ref {
    uint32_t node;     /* the node holding the instance */
    uint32_t url, len; /* target id without '#', in the pool */
    uint8_t kind;      /* 0 instance_node, 1 instance_geometry, 2 instance_controller */
} xml_ref;

typedef struct xml_geom {
    uint32_t id, id_len; /* geometries and controllers */
    uint32_t source, source_len; /* controllers: the geometry (or controller) they deform */
    uint64_t tris, prims;
    uint8_t is_controller;
} xml_geom;

typedef struct collada {
    char *pool;
    uint32_t pool_len, pool_cap;
    xml_node *nodes;
    uint32_t node_count, node_cap;
    xml_ref *refs;
    uint32_t ref_count, ref_cap;
    xml_geom *geoms;
    uint32_t geom_count, geom_cap;
    uint32_t scene_url, scene_url_len; /* <instance_visual_scene url> without its '#' */
    int has_scene_url;
    int is_collada;
} collada;

static void collada_free(collada *c)
{
    free(c->pool), free(c->nodes), free(c->refs), free(c->geoms);
}

/* Appends bytes to the pool; NONE when out of memory. */
static uint32_t pool_add(collada *c, const char *s, uint32_t n)
{
    if ((uint64_t)c->pool_len + n >= NONE - 1)
        return NONE;
    while (c->pool_len + n > c->pool_cap || !c->pool) { /* never NULL: offsets into it are taken */
        uint64_t cap = c->pool_cap ? (uint64_t)c->pool_cap * 2 : 4096;
        if (cap >= NONE)
            cap = NONE - 1;
        char *p = realloc(c->pool, (size_t)cap);
        if (!p)
            return NONE;
        c->pool = p, c->pool_cap = (uint32_t)cap;
    }
    memcpy(c->pool + c->pool_len, s, n);
    c->pool_len += n;
    return c->pool_len - n;
}

/* The attributes of one start tag that matter here (values truncated at 1 KiB: ids are short). */
typedef struct xml_attrs {
    char id[1024], name[1024], url[1024], source[1024];
    uint64_t count;
    int has_count;
} xml_attrs;

static const char *local_name(const char *tag)
{
    const char *colon = strrchr(tag, ':');
    return colon ? colon + 1 : tag;
}

static int tag_kind(const char *t)
{
    if (!strcmp(t, "node"))
        return X_NODE;
    if (!strcmp(t, "library_nodes"))
        return X_LIBNODES;
    if (!strcmp(t, "visual_scene"))
        return X_VSCENE;
    if (!strcmp(t, "geometry"))
        return X_GEOMETRY;
    if (!strcmp(t, "controller"))
        return X_CONTROLLER;
    if (!strcmp(t, "triangles") || !strcmp(t, "polylist") || !strcmp(t, "polygons") ||
        !strcmp(t, "tristrips") || !strcmp(t, "trifans"))
        return X_PRIM;
    if (!strcmp(t, "vcount"))
        return X_VCOUNT;
    return X_OTHER;
}

/* Skips to the end of a construct ending in `end` (comment, CDATA, processing instruction). */
static int skip_until(reader *r, const char *end)
{
    const size_t n = strlen(end);
    size_t matched = 0;
    for (int c; (c = rd_getc(r)) >= 0;) {
        if ((char)c == end[matched]) {
            if (++matched == n)
                return 1;
        } else {
            matched = (char)c == end[0];
        }
    }
    return 0;
}

typedef struct xml_frame {
    uint8_t kind;
    uint32_t node; /* innermost enclosing node */
} xml_frame;

static vr_status collada_record(collada *c, const char *tag, const xml_attrs *a, xml_frame *stack,
                                uint32_t depth, int opens, const char *path)
{
    const int kind = tag_kind(tag);
    const uint32_t parent = depth ? stack[depth - 1].node : NONE;
    const int in_library = depth && stack[depth - 1].kind == X_LIBNODES;
    if (kind == X_NODE || kind == X_VSCENE) {
        if (!GROW(c->nodes, c->node_cap, c->node_count))
            goto oom;
        xml_node *n = &c->nodes[c->node_count];
        memset(n, 0, sizeof *n);
        n->id = pool_add(c, a->id, (uint32_t)strlen(a->id));
        n->id_len = (uint32_t)strlen(a->id);
        /* assimp names an unnamed visual scene "Scene" */
        const char *name = kind == X_VSCENE && !a->name[0] ? "Scene" : a->name;
        n->name = pool_add(c, name, (uint32_t)strlen(name));
        n->name_len = (uint32_t)strlen(name);
        if (n->id == NONE || n->name == NONE)
            goto oom;
        n->parent = kind == X_VSCENE ? NONE : parent;
        n->library_top = kind == X_NODE && in_library;
        n->is_scene = kind == X_VSCENE;
        if (opens)
            stack[depth].node = c->node_count;
        ++c->node_count;
    } else if (opens) {
        stack[depth].node = parent;
    }
    const int inst_node = !strcmp(tag, "instance_node"), inst_geom = !strcmp(tag, "instance_geometry"),
              inst_ctrl = !strcmp(tag, "instance_controller");
    if ((inst_node || inst_geom || inst_ctrl) && parent != NONE && a->url[0] == '#') {
        if (!GROW(c->refs, c->ref_cap, c->ref_count))
            goto oom;
        xml_ref *r = &c->refs[c->ref_count];
        r->node = parent;
        r->len = (uint32_t)strlen(a->url + 1);
        r->url = pool_add(c, a->url + 1, r->len);
        r->kind = inst_node ? 0 : inst_geom ? 1 : 2;
        if (r->url == NONE)
            goto oom;
        ++c->ref_count;
    }
    if (kind == X_GEOMETRY || kind == X_CONTROLLER) {
        if (!GROW(c->geoms, c->geom_cap, c->geom_count))
            goto oom;
        xml_geom *g = &c->geoms[c->geom_count];
        memset(g, 0, sizeof *g);
        g->id_len = (uint32_t)strlen(a->id);
        g->id = pool_add(c, a->id, g->id_len);
        g->is_controller = kind == X_CONTROLLER;
        g->source = NONE;
        if (g->id == NONE)
            goto oom;
        ++c->geom_count;
    }
    if ((!strcmp(tag, "skin") || !strcmp(tag, "morph")) && c->geom_count &&
        c->geoms[c->geom_count - 1].is_controller && a->source[0] == '#') {
        xml_geom *g = &c->geoms[c->geom_count - 1];
        g->source_len = (uint32_t)strlen(a->source + 1);
        g->source = pool_add(c, a->source + 1, g->source_len);
        if (g->source == NONE)
            goto oom;
    }
    if (kind == X_PRIM && c->geom_count && !c->geoms[c->geom_count - 1].is_controller) {
        xml_geom *g = &c->geoms[c->geom_count - 1];
        ++g->prims;
        /* polylist: refined from <vcount> below; the others count polygons or strips, each at
         * least one triangle: a lower bound, enough for a bound */
        if (a->has_count && strcmp(tag, "polylist") != 0)
            g->tris = sat_add(g->tris, a->count);
    }
    if (!strcmp(tag, "instance_visual_scene") && a->url[0] == '#' && !c->has_scene_url) {
        c->has_scene_url = 1;
        c->scene_url_len = (uint32_t)strlen(a->url + 1);
        c->scene_url = pool_add(c, a->url + 1, c->scene_url_len);
        if (c->scene_url == NONE)
            goto oom;
    }
    return VR_OK;
oom:
    return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the Collada node check", path);
}

/* Reads one attribute value (after the opening quote) into `dst` (truncated), or skips it. */
static int xml_value(reader *r, int quote, char *dst, size_t cap)
{
    size_t n = 0;
    for (int c; (c = rd_getc(r)) >= 0;) {
        if (c == quote) {
            if (dst)
                dst[n < cap ? n : cap - 1] = 0;
            return 1;
        }
        if (dst && n + 1 < cap)
            dst[n++] = (char)c;
    }
    return 0;
}

static vr_status xml_scan(vr_precheck *out, collada *col, reader *r, const char *path)
{
    xml_frame *stack = malloc((VR_SCENE_MAX_NESTING + 1) * sizeof *stack);
    xml_attrs *a = malloc(sizeof *a);
    vr_status st = VR_OK;
    if (!stack || !a) {
        st = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the XML check", path);
        goto done;
    }
    uint32_t depth = 0, max_depth = 0, node_depth = 0;
    uint64_t vcount_tris = 0, vcount_value = 0;
    int in_vcount = 0, vcount_digits = 0;
    for (int c; (c = rd_getc(r)) >= 0;) {
        if (c != '<') {
            if (in_vcount) { /* <vcount> of a polylist: sum of (corners - 2) */
                if (c >= '0' && c <= '9') {
                    vcount_value = sat_add(sat_mul(vcount_value, 10), (uint64_t)(c - '0'));
                    vcount_digits = 1;
                } else if (vcount_digits) {
                    vcount_tris = sat_add(vcount_tris, vcount_value > 2 ? vcount_value - 2 : 0);
                    vcount_value = 0, vcount_digits = 0;
                }
            }
            continue;
        }
        if (in_vcount && vcount_digits) {
            vcount_tris = sat_add(vcount_tris, vcount_value > 2 ? vcount_value - 2 : 0);
            vcount_value = 0, vcount_digits = 0;
        }
        const uint64_t at = rd_tell(r) - 1;
        c = rd_getc(r);
        if (c == '!') {
            c = rd_getc(r);
            if (c == '-') {
                if (rd_getc(r) != '-' || !skip_until(r, "-->"))
                    break;
                continue;
            }
            if (c == '[') { /* <![CDATA[ ... ]]> */
                if (!skip_until(r, "]]>"))
                    break;
                continue;
            }
            /* <!DOCTYPE ...> with an optional [internal subset] */
            int brackets = 0, quote = 0;
            while (c >= 0 && !(c == '>' && !brackets && !quote)) {
                if (quote) {
                    if (c == quote)
                        quote = 0;
                } else if (c == '"' || c == '\'') {
                    quote = c;
                } else if (c == '[') {
                    ++brackets;
                } else if (c == ']') {
                    --brackets;
                }
                c = rd_getc(r);
            }
            continue;
        }
        if (c == '?') {
            if (!skip_until(r, "?>"))
                break;
            continue;
        }
        const int closing = c == '/';
        if (closing)
            c = rd_getc(r);
        char tag[64];
        size_t n = 0;
        while (c >= 0 && !isspace(c) && c != '>' && c != '/') {
            if (n + 1 < sizeof tag)
                tag[n++] = (char)c;
            c = rd_getc(r);
        }
        tag[n] = 0;
        const char *name = local_name(tag);
        memset(a, 0, sizeof *a);
        int self_closing = 0;
        /* attributes up to '>' */
        while (c >= 0 && c != '>') {
            if (c == '/') {
                self_closing = 1;
                c = rd_getc(r);
                continue;
            }
            if (isspace(c)) {
                c = rd_getc(r);
                continue;
            }
            char attr[32];
            size_t m = 0;
            while (c >= 0 && c != '=' && !isspace(c) && c != '>' && c != '/') {
                if (m + 1 < sizeof attr)
                    attr[m++] = (char)c;
                c = rd_getc(r);
            }
            attr[m] = 0;
            while (c >= 0 && isspace(c))
                c = rd_getc(r);
            if (c != '=')
                continue;
            do
                c = rd_getc(r);
            while (c >= 0 && isspace(c));
            if (c != '"' && c != '\'')
                continue;
            self_closing = 0;
            char num[32];
            char *dst = !strcmp(attr, "id") ? a->id : !strcmp(attr, "name") ? a->name
                        : !strcmp(attr, "url") ? a->url : !strcmp(attr, "source") ? a->source
                        : !strcmp(attr, "count") ? num : NULL;
            const size_t cap = dst == num ? sizeof num : sizeof a->id;
            if (!xml_value(r, c, dst, cap))
                break;
            if (dst == num) {
                char *end;
                errno = 0;
                const unsigned long long v = strtoull(num, &end, 10);
                a->count = errno ? UINT64_MAX : v;
                a->has_count = end != num;
            }
            c = rd_getc(r);
        }
        if (c < 0)
            break;
        if (!depth && !closing && !col->node_count && !strcmp(name, "COLLADA"))
            col->is_collada = 1;
        if (closing) {
            if (depth) {
                --depth;
                node_depth -= col->is_collada && stack[depth].kind == X_NODE;
                if (stack[depth].kind == X_VCOUNT) {
                    in_vcount = 0;
                    if (col->geom_count)
                        col->geoms[col->geom_count - 1].tris =
                            sat_add(col->geoms[col->geom_count - 1].tris, vcount_tris);
                    vcount_tris = 0;
                }
            }
            continue;
        }
        if (!self_closing && depth == VR_SCENE_MAX_NESTING) {
            st = VR_ERROR(VR_ERR_FORMAT,
                          "%s: XML elements nested more than %u deep at byte %llu (assimp's "
                          "recursive readers would overflow their stack)",
                          path, VR_SCENE_MAX_NESTING, (unsigned long long)at);
            goto done;
        }
        if (col->is_collada && (st = collada_record(col, name, a, stack, depth, !self_closing, path)))
            goto done;
        if (!self_closing) {
            stack[depth].kind = (uint8_t)tag_kind(name);
            if (!col->is_collada)
                stack[depth].node = NONE;
            if (stack[depth].kind == X_VCOUNT)
                in_vcount = 1, vcount_tris = 0;
            /* the visual scene is the root level, as in assimp's tree */
            if (col->is_collada && stack[depth].kind == X_NODE && ++node_depth >= VR_SCENE_MAX_DEPTH) {
                st = VR_ERROR(VR_ERR_FORMAT,
                              "%s: node tree more than %u levels deep (<node> elements nested %u "
                              "deep at byte %llu, below the visual scene): assimp's recursive "
                              "import would overflow its stack; flatten the hierarchy before "
                              "loading",
                              path, VR_SCENE_MAX_DEPTH, node_depth, (unsigned long long)at);
                goto done;
            }
            if (++depth > max_depth)
                max_depth = depth;
        }
    }
    out->depth = max_depth;
done:
    free(stack);
    free(a);
    return st;
}

/* The Collada node DAG: nesting edges, instance_node edges resolved as assimp 5.2.5 does, and
 * geometry counts. assimp looks an instance up in its node library (ids of top-level
 * <library_nodes> nodes and of visual scenes, the last of equal ids winning, as std::map
 * assignment does), then takes the first node of the root scene's tree, in document order, whose
 * name or id matches - empty strings included: a reference "#" finds an unnamed node, maybe the
 * referring node itself, which is a cycle. */
static vr_status collada_check(vr_precheck *out, collada *c, const char *path)
{
    strmap library, any, geoms;
    node_graph g = {0};
    uint32_t *top = malloc(((size_t)c->node_count + 1) * sizeof *top);
    vr_status st = VR_OK;
    if (!top || !strmap_init(&library, c->node_count) || !strmap_init(&any, 2 * c->node_count) ||
        !strmap_init(&geoms, c->geom_count) || !graph_init(&g, c->node_count)) {
        st = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the Collada node check", path);
        goto done;
    }
    for (uint32_t i = 0; i < c->node_count; ++i) {
        const xml_node *n = &c->nodes[i];
        top[i] = n->parent == NONE ? i : top[n->parent]; /* parents come first in the file */
        if (n->library_top || n->is_scene)
            strmap_set(&library, c->pool, n->id, n->id_len, i);
        if (n->parent != NONE && !graph_edge(&g, n->parent, i))
            goto oom;
    }
    /* the scene assimp builds: <instance_visual_scene>'s (any library entry), else every one */
    const uint32_t root = c->has_scene_url
                              ? strmap_get(&library, c->pool, c->pool + c->scene_url, c->scene_url_len)
                              : NONE;
    for (uint32_t i = 0; i < c->node_count; ++i) {
        const xml_node *n = &c->nodes[i];
        if (root != NONE ? top[i] != root : !c->nodes[top[i]].is_scene)
            continue;
        strmap_put(&any, c->pool, n->name, n->name_len, i);
        strmap_put(&any, c->pool, n->id, n->id_len, i);
        if (root == NONE && n->is_scene && !graph_root(&g, i))
            goto oom;
    }
    if (root != NONE && !graph_root(&g, root))
        goto oom;
    for (uint32_t i = 0; i < c->geom_count; ++i)
        if (c->geoms[i].id_len)
            strmap_put(&geoms, c->pool, c->geoms[i].id, c->geoms[i].id_len, i);
    for (uint32_t i = 0; i < c->ref_count; ++i) {
        const xml_ref *r = &c->refs[i];
        const char *url = c->pool + r->url;
        if (r->kind == 0) {
            uint32_t t = strmap_get(&library, c->pool, url, r->len);
            if (t == NONE)
                t = strmap_get(&any, c->pool, url, r->len);
            if (t != NONE && !graph_edge(&g, r->node, t))
                goto oom;
            continue; /* unresolved: assimp logs it and skips it (a repair, load_assimp.c) */
        }
        /* a controller deforms a geometry (or another controller): follow a few links */
        uint32_t t = strmap_get(&geoms, c->pool, url, r->len);
        for (int hop = 0; hop < 8 && t != NONE && c->geoms[t].is_controller; ++hop)
            t = c->geoms[t].source == NONE ? NONE
                : strmap_get(&geoms, c->pool, c->pool + c->geoms[t].source, c->geoms[t].source_len);
        if (t != NONE && !c->geoms[t].is_controller) {
            g.draws[r->node] = sat_add(g.draws[r->node], c->geoms[t].prims);
            g.tris[r->node] = sat_add(g.tris[r->node], c->geoms[t].tris);
        }
    }
    st = graph_analyze(out, &g, path, "Collada node");
    out->exact = 0; /* polygons and strips are counted as lower bounds */
    goto done;
oom:
    st = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the Collada node check", path);
done:
    free(top);
    strmap_free(&library), strmap_free(&any), strmap_free(&geoms);
    graph_free(&g);
    return st;
}

/* ---- bracketed text (X, FBX ascii, ASE, OpenGEX, VRML ...) ----------------------------------- */

static vr_status bracket_scan(vr_precheck *out, reader *r, const char *path)
{
    uint32_t depth = 0, max_depth = 0;
    int quote = 0;
    for (int c; (c = rd_getc(r)) >= 0;) {
        if (quote) {
            if (c == '"' || c == '\n')
                quote = 0;
        } else if (c == '"') {
            quote = 1;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth)
                max_depth = depth;
            if (depth > VR_SCENE_MAX_NESTING)
                return VR_ERROR(VR_ERR_FORMAT,
                                "%s: brackets nested more than %u deep at byte %llu (assimp's "
                                "recursive readers would overflow their stack)",
                                path, VR_SCENE_MAX_NESTING, (unsigned long long)(rd_tell(r) - 1));
        } else if ((c == '}' || c == ']') && depth) {
            --depth;
        }
    }
    out->depth = max_depth;
    return VR_OK;
}

/* ---- binary FBX: record nesting ----------------------------------------------------------------- */

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Moves the reader forward to file offset `off` (records are visited in file order). */
static int rd_seek_forward(reader *r, uint64_t off)
{
    if (off >= r->offset && off <= r->offset + r->len) {
        r->pos = (size_t)(off - r->offset);
        return 1;
    }
    if (off < r->offset || fseeko(r->f, (off_t)off, SEEK_SET) != 0)
        return 0;
    r->offset = off, r->len = 0, r->pos = 0;
    rd_fill(r);
    r->offset = off;
    return 1;
}

static int rd_bytes(reader *r, unsigned char *dst, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        const int c = rd_getc(r);
        if (c < 0)
            return 0;
        dst[i] = (unsigned char)c;
    }
    return 1;
}

/* Records nest by their end offsets; assimp's FBX parser recurses once per level. Only the
 * nesting is checked: anything else malformed stops the scan and is left to assimp. */
static vr_status fbx_scan(vr_precheck *out, reader *r, uint64_t size, const char *path)
{
    unsigned char h[25];
    if (!rd_seek_forward(r, 23) || !rd_bytes(r, h, 4))
        return VR_OK;
    const uint32_t version = le32(h);
    const int wide = version >= 7500; /* 64-bit record fields */
    const size_t head = wide ? 25 : 13;
    uint64_t *ends = malloc((VR_SCENE_MAX_NESTING + 1) * sizeof *ends);
    if (!ends)
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the FBX check", path);
    uint32_t depth = 0, max_depth = 0;
    uint64_t pos = 27;
    vr_status st = VR_OK;
    while (rd_seek_forward(r, pos) && rd_bytes(r, h, head)) {
        uint64_t f[3];
        for (int k = 0; k < 3; ++k) {
            f[k] = 0;
            for (size_t b = 0; b < (wide ? 8u : 4u); ++b)
                f[k] |= (uint64_t)h[k * (wide ? 8 : 4) + b] << (8 * b);
        }
        const uint64_t end = f[0], props = f[2], name = h[head - 1];
        if (end == 0) { /* the null record closing a nested list (or the top level) */
            if (!depth)
                break;
            pos = ends[--depth];
            continue;
        }
        const uint64_t body = pos + head + name + props;
        if (end <= pos || end > size || body > end)
            break; /* not ours to judge: assimp reports it */
        if (body + head <= end) { /* nested records, then a null record */
            if (depth == VR_SCENE_MAX_NESTING) {
                st = VR_ERROR(VR_ERR_FORMAT,
                              "%s: FBX records nested more than %u deep at byte %llu (assimp's "
                              "recursive reader would overflow its stack)",
                              path, VR_SCENE_MAX_NESTING, (unsigned long long)pos);
                break;
            }
            ends[depth++] = end;
            if (depth > max_depth)
                max_depth = depth;
            pos = body;
        } else {
            pos = end;
        }
    }
    out->depth = max_depth;
    free(ends);
    return st;
}

/* ---- OBJ --------------------------------------------------------------------------------------- */

static vr_status obj_scan(vr_precheck *out, reader *r, const char *path)
{
    hashset objects = {0}, materials = {0};
    uint64_t mesh_lines = 0, tris = 0, short_faces = 0, first_short = 0, line = 0;
    uint64_t empty_faces = 0, first_empty = 0;
    vr_status st = VR_OK;
    int c = rd_getc(r);
    while (c >= 0) {
        while (c == ' ' || c == '\t')
            c = rd_getc(r);
        /* the keyword */
        char key[8];
        size_t k = 0;
        while (c >= 0 && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            if (k + 1 < sizeof key)
                key[k++] = (char)c;
            else
                k = sizeof key; /* too long: no keyword of ours */
            c = rd_getc(r);
        }
        key[k < sizeof key ? k : 0] = 0;
        const int is_o = !strcmp(key, "o"), is_mtl = !strcmp(key, "usemtl"), is_f = !strcmp(key, "f");
        if (is_o || !strcmp(key, "g") || is_mtl)
            ++mesh_lines;
        /* the rest of the line (with `\` continuations, as assimp joins them) */
        uint64_t h = 0xcbf29ce484222325ull, h_trimmed = h;
        int in_token = 0, first_token_done = 0, name_chars = 0;
        uint64_t corners = 0;
        for (;;) {
            if (c == '\\') {
                c = rd_getc(r);
                if (c == '\r')
                    c = rd_getc(r);
                if (c == '\n') {
                    c = ' ';
                    ++line;
                } else {
                    /* a lone backslash is part of the text */
                    if (!first_token_done)
                        h = (h ^ '\\') * 0x100000001b3ull, h_trimmed = h, ++name_chars;
                    continue;
                }
            }
            if (c < 0 || c == '\n' || c == '\r')
                break;
            const int space = c == ' ' || c == '\t';
            if (!space && !in_token)
                ++corners;
            in_token = !space;
            if (is_o && !first_token_done) {
                if (space && name_chars)
                    first_token_done = 1;
                else if (!space)
                    h = (h ^ (unsigned char)c) * 0x100000001b3ull, ++name_chars;
            } else if (is_mtl && (name_chars || !space)) {
                /* the rest of the line, trimmed: hash up to the last non-blank character */
                h = (h ^ (unsigned char)c) * 0x100000001b3ull, ++name_chars;
                if (!space)
                    h_trimmed = h;
            }
            c = rd_getc(r);
        }
        if (c >= 0)
            c = rd_getc(r);
        ++line;
        if (is_f) {
            if (corners >= 3) {
                tris += corners - 2;
            } else if (corners > 0 && !short_faces++) {
                first_short = line;
            } else if (corners == 0 && !empty_faces++) {
                first_empty = line; /* assimp skips them: a face of the file silently gone */
            }
        }
        if ((is_o || is_mtl) && name_chars) {
            const int added = hashset_add(is_o ? &objects : &materials, is_o ? h : h_trimmed);
            if (added < 0) {
                st = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the OBJ name check", path);
                goto done;
            }
            const uint32_t count = is_o ? objects.count : materials.count;
            const uint32_t limit = is_o ? VR_OBJ_MAX_OBJECTS : VR_OBJ_MAX_MATERIALS;
            if (count > limit) {
                st = VR_ERROR(VR_ERR_FORMAT,
                              "%s: more than %u %s ('%s' lines with distinct names; number %u "
                              "ends at byte %llu): assimp's OBJ reader looks each up among all "
                              "before it, %s; merge them or convert the file",
                              path, limit, is_o ? "objects" : "materials", is_o ? "o" : "usemtl",
                              count, (unsigned long long)rd_tell(r),
                              is_o ? "which takes minutes at 100,000"
                                   : "and keeps ~40 KB each (30,000 take 8 s and 1 GB)");
                goto done;
            }
        }
    }
    if (mesh_lines + 1 > VR_SCENE_MAX_DRAWS) {
        st = VR_ERROR(VR_ERR_FORMAT,
                      "%s: %llu 'o', 'g' and 'usemtl' lines, each of which may start a mesh "
                      "(limit %u draws)", path, (unsigned long long)mesh_lines, VR_SCENE_MAX_DRAWS);
        goto done;
    }
    if (tris > VR_MAX_TRIANGLES) {
        st = VR_ERROR(VR_ERR_FORMAT, "%s: %llu triangles (limit %u, the 2^32-1 index limit)", path,
                      (unsigned long long)tris, VR_MAX_TRIANGLES);
        goto done;
    }
    if (short_faces) {
        st = VR_ERROR(VR_ERR_FORMAT,
                      "%s: %llu face%s with fewer than 3 corners (the first on line %llu), which "
                      "assimp's OBJ reader cannot load; remove them or write them as 'l' lines",
                      path, (unsigned long long)short_faces, short_faces == 1 ? "" : "s",
                      (unsigned long long)first_short);
        goto done;
    }
    if (empty_faces) {
        out->repairs += empty_faces;
        snprintf(out->repair_note, sizeof out->repair_note,
                 "%llu empty 'f' line%s (faces without corners, the first on line %llu) skipped",
                 (unsigned long long)empty_faces, empty_faces == 1 ? "" : "s",
                 (unsigned long long)first_empty);
    }
    out->triangles = tris;
    out->draws = mesh_lines + 1;
    out->exact = 1;
done:
    free(objects.slot);
    free(materials.slot);
    return st;
}

/* ---- OFF --------------------------------------------------------------------------------------- */

/* Reads the next blank-separated token of at most cap-1 bytes; skips # comments like assimp's
 * header reader does not, which only makes the check more lenient. 0 at the end of the file. */
static int next_token(reader *r, char *tok, size_t cap)
{
    int c = rd_getc(r);
    for (;;) {
        while (c >= 0 && isspace(c))
            c = rd_getc(r);
        if (c != '#')
            break;
        while (c >= 0 && c != '\n')
            c = rd_getc(r);
    }
    size_t n = 0;
    while (c >= 0 && !isspace(c)) {
        if (n + 1 < cap)
            tok[n++] = (char)c;
        c = rd_getc(r);
    }
    tok[n] = 0;
    return n > 0;
}

/* "OFF" with the optional ST, C, N, 4, n prefixes, as assimp's OFF reader accepts it */
static int off_keyword(const unsigned char *p, size_t n)
{
    size_t i = 0;
    if (n >= 2 && p[0] == 'S' && p[1] == 'T')
        i = 2;
    for (const char *opt = "CN4n"; *opt; ++opt)
        if (i < n && p[i] == (unsigned char)*opt)
            ++i;
    return n - i >= 3 && !memcmp(p + i, "OFF", 3) && (n - i == 3 || isspace(p[i + 3]));
}

static vr_status off_check(reader *r, uint64_t size, const char *path)
{
    char tok[64];
    if (!next_token(r, tok, sizeof tok))
        return VR_OK; /* empty: assimp says so */
    if (!off_keyword((const unsigned char *)tok, strlen(tok)))
        return VR_OK; /* no header keyword: assimp decides */
    const int dims_token = strchr(tok, 'n') != NULL;
    if (dims_token && !next_token(r, tok, sizeof tok))
        return VR_OK;
    uint64_t v[2];
    for (int i = 0; i < 2; ++i) {
        char *end;
        if (!next_token(r, tok, sizeof tok))
            return VR_OK;
        errno = 0;
        v[i] = strtoull(tok, &end, 10);
        if (end == tok || tok[0] == '-')
            return VR_OK; /* assimp reports a bad header itself */
        if (errno)
            v[i] = UINT64_MAX;
    }
    /* after the header, a vertex needs at least "x y z\n" (6 bytes), a face "1 i\n" (4) */
    const uint64_t rest = size - rd_tell(r) + 1;
    if (v[0] > UINT32_MAX || v[1] > UINT32_MAX ||
        sat_add(sat_mul(v[0], 6), sat_mul(v[1], 4)) > rest)
        return VR_ERROR(VR_ERR_FORMAT,
                        "%s: the OFF header declares %llu vertices and %llu faces, but the %llu "
                        "bytes after it hold at most %llu vertices (6 bytes each at least); the "
                        "header is wrong or the file is truncated",
                        path, (unsigned long long)v[0], (unsigned long long)v[1],
                        (unsigned long long)rest, (unsigned long long)(rest / 6));
    return VR_OK;
}

/* ---- GLB --------------------------------------------------------------------------------------- */


static vr_status glb_check(vr_precheck *out, FILE *f, uint64_t size, const char *path)
{
    unsigned char h[20];
    const size_t got = fread(h, 1, sizeof h, f);
    if (got < 12)
        return VR_ERROR(VR_ERR_FORMAT, "%s: a GLB file starts with a 12-byte header; this one has "
                        "%llu bytes: truncated", path, (unsigned long long)size);
    if (memcmp(h, "glTF", 4) != 0) {
        char shown[16];
        for (int i = 0; i < 4; ++i)
            shown[i] = h[i] >= 0x20 && h[i] < 0x7f ? (char)h[i] : '?';
        shown[4] = 0;
        return VR_ERROR(VR_ERR_FORMAT, "%s: bad GLB magic '%s' (expected 'glTF'): not a binary "
                        "glTF file, or a damaged one", path, shown);
    }
    const uint32_t version = le32(h + 4), length = le32(h + 8);
    if (version != 2)
        return VR_ERROR(VR_ERR_FORMAT, "%s: GLB version %u; only binary glTF 2.0 is read", path,
                        version);
    if (length > size)
        return VR_ERROR(VR_ERR_FORMAT, "%s: the GLB header says %u bytes, but the file has %llu: "
                        "truncated", path, length, (unsigned long long)size);
    if (got < 20 || length < 20)
        return VR_ERROR(VR_ERR_FORMAT, "%s: GLB file without a JSON chunk (%u bytes)", path, length);
    const uint32_t json_len = le32(h + 12), json_type = le32(h + 16);
    if (json_type != 0x4E4F534Au)
        return VR_ERROR(VR_ERR_FORMAT, "%s: the first GLB chunk has type 0x%08x, not JSON "
                        "(0x4E4F534A)", path, json_type);
    if (json_len > length - 20)
        return VR_ERROR(VR_ERR_FORMAT, "%s: the GLB JSON chunk claims %u bytes, but only %u follow "
                        "its header: the chunk length is wrong or the file is truncated",
                        path, json_len, length - 20);
    const uint64_t bin_at = 20 + (((uint64_t)json_len + 3) & ~3ull);
    if (bin_at + 8 <= length) {
        unsigned char b[8];
        if (fseek(f, (long)bin_at, SEEK_SET) != 0 || fread(b, 1, 8, f) != 8)
            return VR_ERROR(VR_ERR_IO, "%s: cannot read the GLB binary chunk header", path);
        const uint32_t bin_len = le32(b), bin_type = le32(b + 4);
        if (bin_type != 0x004E4942u)
            return VR_ERROR(VR_ERR_FORMAT, "%s: the second GLB chunk has type 0x%08x, not BIN "
                            "(0x004E4942)", path, bin_type);
        if (bin_len > length - bin_at - 8)
            return VR_ERROR(VR_ERR_FORMAT, "%s: the GLB binary chunk claims %u bytes, but only "
                            "%llu follow its header: the chunk length is wrong or the file is "
                            "truncated", path, bin_len, (unsigned long long)(length - bin_at - 8));
    }
    char *text = malloc((size_t)json_len + 1);
    if (!text)
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate the %u-byte GLB JSON chunk", path, json_len);
    vr_status st = VR_OK;
    if (fseek(f, 20, SEEK_SET) != 0 || fread(text, 1, json_len, f) != json_len) {
        st = VR_ERROR(VR_ERR_IO, "%s: cannot read the GLB JSON chunk", path);
    } else {
        json_doc d = {text, json_len, NULL, 0, 0};
        st = gltf_check(out, &d, path, "the GLB JSON chunk", 20);
        free(d.tok);
    }
    free(text);
    return st;
}

/* ---- dispatch ---------------------------------------------------------------------------------- */

static int has_ext(const char *path, const char *ext)
{
    const size_t n = strlen(path), e = strlen(ext);
    return n > e && path[n - e - 1] == '.' && !strcasecmp(path + n - e, ext);
}

vr_status vr_precheck_file(vr_precheck *out, const char *path)
{
    memset(out, 0, sizeof *out);
    out->triangles = out->draws = out->nodes = VR_PRECHECK_UNKNOWN;
    out->format = "binary";
    FILE *f = fopen(path, "rb");
    if (!f)
        return VR_ERROR(VR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0) {
        fclose(f);
        return VR_ERROR(VR_ERR_IO, "%s: cannot read its size: %s", path, strerror(errno));
    }
    const uint64_t size = (uint64_t)sb.st_size;
    reader r = {f, malloc(READER_BYTES), 0, 0, 0, 0};
    vr_status st = VR_OK;
    if (!r.buf) {
        fclose(f);
        return VR_ERROR(VR_ERR_OOM, "%s: cannot allocate a read buffer", path);
    }
    rd_fill(&r);
    r.offset = 0;
    /* the first non-blank byte (after a UTF-8 byte-order mark) and whether the head is text */
    size_t first = 0;
    if (r.len >= 3 && !memcmp(r.buf, "\xEF\xBB\xBF", 3))
        first = 3;
    while (first < r.len && isspace(r.buf[first]))
        ++first;
    const int lead = first < r.len ? r.buf[first] : -1;
    const int text = r.len > 0 && !memchr(r.buf, 0, r.len);

    if ((r.len >= 4 && !memcmp(r.buf, "glTF", 4)) || has_ext(path, "glb")) {
        out->format = "GLB";
        rewind(f);
        st = glb_check(out, f, size, path);
    } else if (has_ext(path, "gltf") || (text && lead == '{' && size < UINT32_MAX)) {
        out->format = "glTF";
        if (size >= UINT32_MAX) {
            st = VR_ERROR(VR_ERR_FORMAT, "%s: a glTF JSON file of %llu bytes (4 GB at most)", path,
                          (unsigned long long)size);
            goto done;
        }
        char *doc = malloc((size_t)size + 1);
        if (!doc) {
            st = VR_ERROR(VR_ERR_OOM, "%s: cannot allocate %llu bytes for the JSON", path,
                          (unsigned long long)size);
            goto done;
        }
        rewind(f);
        if (fread(doc, 1, (size_t)size, f) != size) {
            free(doc);
            st = VR_ERROR(VR_ERR_IO, "%s: cannot read the file", path);
            goto done;
        }
        json_doc d = {doc, (uint32_t)size, NULL, 0, 0};
        st = gltf_check(out, &d, path, "JSON", 0);
        free(d.tok);
        free(doc);
        if (st && !has_ext(path, "gltf")) {
            /* JSON-looking but not glTF: not ours to judge beyond its nesting */
            memset(out, 0, sizeof *out);
            out->triangles = out->draws = out->nodes = VR_PRECHECK_UNKNOWN;
            out->format = "text";
            rewind(f);
            r.len = r.pos = 0, r.offset = 0;
            st = bracket_scan(out, &r, path);
        }
    } else if (r.len >= 27 && !memcmp(r.buf, "Kaydara FBX Binary  ", 21)) {
        out->format = "FBX";
        st = fbx_scan(out, &r, size, path);
    } else if (text && lead == '<') {
        collada col = {0};
        st = xml_scan(out, &col, &r, path);
        out->format = col.is_collada ? "Collada" : "XML";
        if (!st && col.is_collada)
            st = collada_check(out, &col, path);
        collada_free(&col);
    } else if (has_ext(path, "obj")) {
        out->format = "OBJ";
        st = obj_scan(out, &r, path);
    } else if (has_ext(path, "off") || (text && off_keyword(r.buf + first, r.len - first))) {
        out->format = "OFF";
        st = off_check(&r, size, path);
    } else if (text) {
        out->format = "text";
        st = bracket_scan(out, &r, path);
    }
    if (!st && r.failed)
        st = VR_ERROR(VR_ERR_IO, "%s: read error: %s", path, strerror(errno));
done:
    free(r.buf);
    fclose(f);
    return st;
}
