/* gts.h - compressed index buffers: the generalized-triangle-strip codec of Meyer et al. 2012,
 * "Data-Parallel Decompression of Triangle Mesh Topology" (../shared/papers/000_*.txt).
 * The encoder (gts_encode.c) orders triangles in belts and strips and vertices by first visit;
 * the stream holds strip codes C, incremental-vertex bits INC and the re-used vertices U as
 * zigzag deltas in Simple-9 words S. Decoders: gts_decode_ref.c (CPU), gts_decode.cu (GPU, CUB
 * scans as in the paper's Fig. 4, 5, 7; V and the strips by default in tiled passes that keep
 * incscan, M and Q on chip). File format: gts_format.c.
 * Try: `vreuse compress ../shared/scenes/horse.ply -o horse.gts`, `vreuse_tests gts/`.
 */
#ifndef VR_GTS_H
#define VR_GTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline/vreuse.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VR_GTS_VERSION 1u            /* file format version written and accepted */
#define VR_GTS_CODE_N 0u             /* next-edge: T[i] = (T[i-1].v2, T[i-1].v1, new) */
#define VR_GTS_CODE_P 1u             /* previous-edge: T[i] = (T[i-1].v0, T[i-1].v2, new) */
#define VR_GTS_CODE_R 2u             /* restart: T[i] = three explicit vertices (R mode only) */
#define VR_GTS_EMULATED 0xffffffffu  /* triangle_source of a restart-emulation triangle */
#define VR_GTS_MAX_TRIANGLES 0x3fffffffu /* strip triangles; keeps |V| <= 3 |T| below 2^32 */

typedef enum vr_gts_restart {
    VR_GTS_RESTART_CODE = 0,      /* explicit R codes, 2 bits per strip code (paper: "R") */
    VR_GTS_RESTART_DEGENERATE = 1 /* restarts emulated by degenerate triangles, 1 bit ("deg.") */
} vr_gts_restart;

typedef enum vr_gts_packing {
    VR_GTS_PACK_OPTIMAL = 0, /* fewest Simple-9 words (dynamic programming); decoder unchanged */
    VR_GTS_PACK_GREEDY = 1   /* the paper's greedy packing (most codes per word first) */
} vr_gts_packing;

typedef struct vr_gts_options {
    vr_gts_restart restart;
    vr_gts_packing packing;
    int keep_vertex_data; /* 1: copy the (permuted) positions/normals/texcoords into the stream */
} vr_gts_options;

vr_gts_options vr_gts_options_default(void); /* RESTART_DEGENERATE, PACK_OPTIMAL, keep data */

/* The compressed stream. Arrays are host memory owned by the struct: vr_gts_free releases them.
 * Bit layouts (little end first): strip code i is bits 2(i%16)..+1 of c[i/16] in R mode and
 * bit i%32 of c[i/32] in deg. mode (code 0 is ignored there: triangle 0 is always explicit);
 * INC bit j is bit j%32 of inc[j/32]; a Simple-9 word holds its selector 0..8 in bits 28..31
 * and code k in bits k*b..k*b+b-1 (b = vr_s9_bits(selector)), unused bits zero. */
typedef struct vr_gts {
    vr_gts_restart restart;
    uint32_t triangle_count;       /* triangles of the source mesh */
    uint32_t strip_triangle_count; /* |C| = |T|: triangle_count + emulation triangles (deg.) */
    uint32_t restart_count;        /* strips - 1: R codes after the first (R), bridges (deg.) */
    uint32_t vertex_count;         /* vertices of the vertex data: referenced first, then unused */
    uint32_t referenced_count;     /* vertices some triangle uses = ones in INC */
    uint32_t v_count;              /* |V|: |T| + 2 + 2 * restart_count (R), |T| + 2 (deg.) */
    uint32_t u_count;              /* |U| = v_count - referenced_count: re-used vertices */
    uint32_t s_count;              /* Simple-9 words in s */
    uint32_t *c;                   /* vr_gts_c_words(g) words of strip codes */
    uint32_t *inc;                 /* (v_count + 31) / 32 words of INC bits */
    uint32_t *s;                   /* s_count Simple-9 words: zigzag(U[k] - U[k-1]), U[-1] = 0 */
    /* deg. mode: the emulation triangles are all degenerate; a source triangle that is degenerate
     * too is listed here, so a loader can keep exactly the source triangles (the listed ones and
     * every non-degenerate one). 0 / NULL in R mode and for meshes without degenerate triangles
     * (then the file is byte for byte what earlier versions wrote). */
    uint32_t degenerate_source_count;
    uint32_t *degenerate_source;   /* degenerate_source_count strip positions, increasing */
    float *positions;              /* 3 * vertex_count floats in the new vertex order, or NULL */
    float *normals;                /* 3 * vertex_count floats, or NULL */
    float *texcoords;              /* 2 * vertex_count floats, or NULL */
} vr_gts;

/* What the encoder did to the mesh; host arrays allocated by vr_gts_encode, freed with
 * vr_gts_map_free. The decoders return exactly `indices` (same order, rotation and winding). */
typedef struct vr_gts_map {
    uint32_t strip_triangle_count;
    uint32_t vertex_count;
    uint32_t *indices;         /* 3 * strip_triangle_count: the reordered triangles, new ids */
    uint32_t *triangle_source; /* strip_triangle_count: source triangle, or VR_GTS_EMULATED */
    uint32_t *old_of_new;      /* vertex_count: new vertex id -> source vertex id */
    uint32_t *new_of_old;      /* vertex_count: source vertex id -> new vertex id */
} vr_gts_map;

/* Per-stage sizes in bits per source triangle, the rows of the paper's Table 3: `explicit`
 * 3 ceil(log2 vertices) per strip triangle, `strips` C + |V| ceil(log2 vertices), `inc`
 * C + INC + |U| ceil(log2 vertices), `s9` C + INC + 32 |S| (what Table 2 reports). */
typedef struct vr_gts_stats {
    uint64_t triangles, strip_triangles, strips, restarts;
    uint64_t vertices, referenced_vertices, v_count, u_count, s_words;
    uint32_t index_bits;  /* ceil(log2(vertex_count)), at least 1 */
    uint64_t c_bits;      /* 2 |T| (R) or |T| (deg.) */
    uint64_t inc_bits;    /* |V| */
    uint64_t s9_bits;     /* 32 |S| */
    uint64_t file_bytes;  /* connectivity part of the file: header + C + INC + S + degenerate
                           * source list + checksum */
    double explicit_bpt, strips_bpt, inc_bpt, s9_bpt;
    double file_bpt;      /* 8 file_bytes / triangles */
    double u_per_tri;     /* |U| / triangles */
    double bits_per_u;    /* 32 |S| / |U| */
} vr_gts_stats;

/* ---- encoder (gts_encode.c) --------------------------------------------------------------- */

/* Compresses `mesh` (validated: indices < vertex_count, > 0 triangles, fewer than
 * VR_GTS_MAX_TRIANGLES). Reorders triangles in
 * belts and generalized strips (restarts for components, non-manifold and inconsistently
 * oriented edges and degenerate triangles), renumbers vertices by first visit (unreferenced
 * vertices last, in source order) and permutes the vertex data when opt->keep_vertex_data.
 * `map` may be NULL. Errors: VR_ERR_FORMAT (bad mesh), VR_ERR_OVERFLOW (a delta needs more than
 * 28 bits or the mesh is too large), VR_ERR_OOM. Nothing stays allocated on failure.
 * O(T + vertex_count) time and memory for T triangles (no sort); uses a second thread for
 * meshes of 65,536 triangles or more. */
vr_status vr_gts_encode(vr_gts *out, vr_gts_map *map, const vr_mesh *mesh,
                        const vr_gts_options *opt);
void vr_gts_map_free(vr_gts_map *m);  /* accepts NULL and zeroed structs */

/* ---- structure, statistics (gts_format.c) ------------------------------------------------- */

void vr_gts_free(vr_gts *g);               /* accepts NULL and zeroed structs */
uint32_t vr_gts_c_words(const vr_gts *g);  /* words of c for strip_triangle_count codes */
uint32_t vr_gts_inc_words(const vr_gts *g);
/* Checks everything that can be checked without decoding U: counts against each other, strip
 * codes (no code 3, R first in R mode, R count matches v_count), INC popcount, Simple-9
 * selectors, padding bits and code count. `what` names the source in messages. */
vr_status vr_gts_validate(const vr_gts *g, const char *what);
/* The O(1) part of vr_gts_validate: counts against each other and array presence. */
vr_status vr_gts_validate_counts(const vr_gts *g, const char *what);
/* Fills the Table 3 sizes of a stream (no decoding, O(1)). */
void vr_gts_stats_compute(vr_gts_stats *out, const vr_gts *g);
/* Prints the stats as a table (counts and the Table 3 rows); `name` heads it. */
void vr_gts_print_stats(FILE *f, const vr_gts *g, const char *name);

/* ---- file format (gts_format.c) -----------------------------------------------------------
 * Little-endian: 64-byte header ("VRGTS\0\r\n" magic, version, flags, counts), then C, INC and
 * S words, then the degenerate_source words (their count is the header's last field, reserved
 * and 0 before: older files read the same), then the optional vertex arrays, then an FNV-1a 64
 * checksum of all preceding bytes.
 * Readers check every count, size and the checksum before trusting anything. */
size_t vr_gts_file_bytes(const vr_gts *g); /* O(1) */
/* Writes the file image into dst (cap bytes, at least vr_gts_file_bytes); *written = size.
 * VR_ERR_OVERFLOW when cap is too small. O(file size), as are the readers below. */
vr_status vr_gts_write_memory(uint8_t *dst, size_t cap, size_t *written, const vr_gts *g);
/* The file image to `path` (VR_ERR_IO naming it when a write fails). */
vr_status vr_gts_write(const vr_gts *g, const char *path);
/* Parses a file image; `what` names it in messages. VR_ERR_FORMAT on anything malformed. */
vr_status vr_gts_read_memory(vr_gts *out, const uint8_t *data, size_t size, const char *what);
/* vr_gts_read_memory of a file (VR_ERR_IO when it cannot be read); free with vr_gts_free. */
vr_status vr_gts_read(vr_gts *out, const char *path);
/* `vreuse info F.gts`: reads, validates, decodes on the CPU and prints the stats table.
 * Returns VR_OK, or the reader's / decoder's status (message in vr_last_error). */
vr_status vr_gts_print_info(FILE *f, const char *path);
/* 1 when the first bytes of `path` are the GTS magic (so `vreuse info` can dispatch). */
int vr_gts_is_file(const char *path);

/* ---- CPU decoders (gts_decode_ref.c) ------------------------------------------------------ */

/* The plain sequential decoder: Simple-9 -> U, INC + U -> V, the strip recursion (paper Eq. 3
 * with restarts) -> 3 * strip_triangle_count indices into `indices` (the caller's array of that
 * size). Validates everything it reads (indices must re-use only vertices already introduced)
 * and returns VR_ERR_FORMAT with a message. This and the two decoders below: O(|V| + |S|) time,
 * O(|V|) scratch. */
vr_status vr_gts_decode_ref(uint32_t *indices, const vr_gts *g);
/* The GPU's data-parallel formulation on the CPU, pass by pass (M_Scan, Q_Scan with a max
 * scan, T_Kernel, INC_Scan, V_Kernel, S_Scan, D_Scatter, U_Scan) with the arithmetic of
 * gts_math.h: a check of the parallel algorithm that runs without a GPU. */
vr_status vr_gts_decode_scan_ref(uint32_t *indices, const vr_gts *g);
/* The GPU's tiled passes on the CPU (the U part as vr_gts_decode_scan_ref): VTile_Reduce (INC
 * ones per tile of VR_GTS_VTILE V entries), VTile_Scan (exclusive sum: every tile's carry),
 * V_Tiled (ones before each entry from the carry and word popcounts, no incscan array);
 * Tile_Reduce (one aggregate per tile of VR_GTS_TILE triangles: M steps and the tile's largest Q
 * candidate relative to its M base), Tile_Scan (exclusive scan of the aggregates: every tile's M
 * and Q carry), T_Tiled (M[i], Q[i] rebuilt per tile from the carry, never stored). Same output
 * and the same error verdict as vr_gts_decode_scan_ref, malformed streams included. */
vr_status vr_gts_decode_tiled_ref(uint32_t *indices, const vr_gts *g);
/* The sequential U and V, shared by vr_gts_decode_ref and vr_gts_batch_seeds (the stream passed
 * vr_gts_validate): u (u_count + 1 words) from the Simple-9 words, v (v_count words) from INC and
 * U, and with inc_before (v_count + 1 words, or NULL) the INC ones before each V entry and their
 * total. VR_ERR_FORMAT, naming `what`, when a re-used vertex is not introduced yet. */
vr_status vr_gts_decode_uv(uint32_t *u, uint32_t *v, uint32_t *inc_before, const vr_gts *g,
                           const char *what);
/* U_Scan sequentially: u[k] = u_prev + the sum of unzigzag(d[0..k]) for k < count (u may be d);
 * returns the last value (u_prev when count is 0). */
uint32_t vr_gts_u_sum(uint32_t *u, const uint32_t *d, uint32_t count, uint32_t u_prev);
/* Decodes into a mesh with the stream's vertex data (zero-filled when it has none);
 * the result owns its arrays (free with vr_mesh_free, or free() on each array). */
vr_status vr_gts_decode_mesh(vr_mesh *out, const vr_gts *g);

/* ---- GPU decoder (gts_decode.cu; stubs returning VR_ERR_NO_DEVICE without CUDA) ----------- */

typedef enum vr_gts_stage {
    VR_GTS_M_SCAN = 0, /* M = inclusive sum of (R ? 3 : 1) - 1: third vertex of triangle i */
    VR_GTS_Q_SCAN,     /* Q = inclusive max scan of Eq. 8: the carried vertex of N/P */
    VR_GTS_T_KERNEL,   /* T[i] from C, M, Q, V (Eq. 6) */
    VR_GTS_INC_SCAN,   /* exclusive sum of INC bits */
    VR_GTS_V_KERNEL,   /* V[j] = INC ? incscan[j] : U[j - incscan[j]] */
    VR_GTS_S_SCAN,     /* exclusive sum of codes per Simple-9 word */
    VR_GTS_D_SCATTER,  /* one thread per word unpacks its codes into D */
    VR_GTS_U_SCAN,     /* U = inclusive sum of unzigzag(D) */
    /* the tiled strip pass (default): replaces M_Scan, Q_Scan, T_Kernel, stores neither M nor Q */
    VR_GTS_TILE_REDUCE, /* per tile of VR_GTS_TILE triangles: sum of M steps, largest Q candidate */
    VR_GTS_TILE_SCAN,   /* exclusive scan of the tile aggregates: M and Q carry of every tile */
    VR_GTS_TILE_T,      /* per tile: block scan from the carry -> M, Q in registers -> T (Eq. 6) */
    /* the tiled V pass (with the tiled strips): replaces INC_Scan, V_Kernel, stores no incscan */
    VR_GTS_VTILE_REDUCE, /* per tile of VR_GTS_VTILE V entries: popcount of its INC words */
    VR_GTS_VTILE_SCAN,   /* exclusive sum of the tile counts: INC ones before every tile */
    VR_GTS_V_TILED,      /* per tile: block scan of word popcounts from the carry -> V */
    VR_GTS_STAGE_COUNT
} vr_gts_stage;

const char *vr_gts_stage_name(vr_gts_stage s); /* "M_Scan", ... as in the paper's Table 4 */

/* Which passes decode INC + U -> V and the strips (C, V -> T); the U part (S_Scan, D_Scatter,
 * U_Scan) is shared. */
typedef enum vr_gts_strip_pass {
    VR_GTS_STRIPS_TILED = 0, /* VTile_Reduce, VTile_Scan, V_Tiled, Tile_Reduce, Tile_Scan, T_Tiled:
                              * incscan, M and Q stay on chip (default from
                              * VR_GTS_TILED_MIN_TRIANGLES strip triangles) */
    VR_GTS_STRIPS_PAPER = 1  /* INC_Scan, V_Kernel, M_Scan, Q_Scan, T_Kernel as in the paper
                              * (Table 4 breakdown) */
} vr_gts_strip_pass;

/* The default pass of a new context: tiled from this many strip triangles, the paper's below.
 * Measured on the H100 (spheres of 150k..4M triangles, both restart modes): the tiled passes' extra
 * launches cost 5-15% up to 2M triangles (deg. mode; R mode about even), and they win from 4M
 * (0.115 vs 0.157 ms R, 0.108 vs 0.131 ms deg.; 7M: 0.155 vs 0.249 ms). */
#define VR_GTS_TILED_MIN_TRIANGLES (3u << 20)

typedef struct vr_gts_gpu_timing {
    float stage_ms[VR_GTS_STAGE_COUNT]; /* cudaEvent time per stage; 0 for stages that did not run
                                         * (the other pass's stages, M_Scan in deg. mode, the S-9
                                         * stages without re-used vertices) */
    uint32_t stage_ran;                 /* bit s set: stage s launched work in this decode */
    float total_ms;                     /* first to last event */
} vr_gts_gpu_timing;

typedef struct vr_gts_gpu vr_gts_gpu;

/* Uploads the stream and allocates all device memory once (decode allocates nothing): O(|V|)
 * device memory, about 30 bytes per strip triangle plus CUB's scan scratch.
 * Checks the counts on the host first (vr_gts_validate's count part, no O(n) scans); the
 * kernels guard every access and raise a device error flag that decode turns into
 * VR_ERR_FORMAT. VR_ERR_NO_DEVICE without a device or CUDA build. */
vr_status vr_gts_gpu_create(vr_gts_gpu **out, const vr_gts *g);
/* Selects the V and strip passes of later decodes (default: tiled from
 * VR_GTS_TILED_MIN_TRIANGLES strip triangles, else the paper's); create allocates the buffers of
 * both, so switching allocates nothing. */
void vr_gts_gpu_set_strip_pass(vr_gts_gpu *d, vr_gts_strip_pass p);
/* Runs all passes on the context's stream. `timing`: NULL times nothing; otherwise with
 * `breakdown` 1 an event pair brackets every stage that runs (Table 4), with 0 only the whole
 * decode. */
vr_status vr_gts_gpu_decode(vr_gts_gpu *d, vr_gts_gpu_timing *timing, int breakdown);
/* Copies the last decode's 3 * strip_triangle_count indices to host memory. */
vr_status vr_gts_gpu_download(uint32_t *indices, const vr_gts_gpu *d);
const uint32_t *vr_gts_gpu_device_indices(const vr_gts_gpu *d); /* owned by the context */
void vr_gts_gpu_destroy(vr_gts_gpu *d);                           /* accepts NULL */
/* One-shot: create, decode (with breakdown when timing != NULL), download, destroy. */
vr_status vr_gts_decode_gpu(uint32_t *indices, const vr_gts *g, vr_gts_gpu_timing *timing);

/* ---- Simple-9 (simple9.c) ------------------------------------------------------------------
 * Anh & Moffat 2005 (paper Table 1): selector s holds vr_s9_count(s) codes of vr_s9_bits(s)
 * bits: 28x1, 14x2, 9x3, 7x4, 5x5, 4x7, 3x9, 2x14, 1x28. Streams here are exact: the codes of
 * all words add up to the value count, no padding codes. */
uint32_t vr_s9_bits(uint32_t selector);  /* 0 for selectors > 8 */
uint32_t vr_s9_count(uint32_t selector); /* 0 for selectors > 8 */
uint32_t vr_s9_value_bits(uint32_t value); /* bits a code of `value` needs: 0 for 0, 1..32 */
/* Packs `count` values (< 2^28) into dst (at most `count` words); *word_count = words used.
 * VR_ERR_OVERFLOW names the first value that needs more than 28 bits. */
vr_status vr_s9_encode(uint32_t *dst, size_t *word_count, const uint32_t *values, size_t count,
                       vr_gts_packing packing);
/* Word `index` of a stream on its own: VR_ERR_FORMAT, naming `what` and the word, on a selector
 * above 8 or nonzero padding bits above its codes (vr_s9_decode and vr_gts_validate check S
 * with it). */
vr_status vr_s9_word_check(uint32_t word, size_t index, const char *what);
/* Unpacks exactly `count` values; VR_ERR_FORMAT on a bad selector, nonzero padding bits or a
 * code total that differs from `count` (`what` names the stream). */
vr_status vr_s9_decode(uint32_t *dst, size_t count, const uint32_t *words, size_t word_count,
                       const char *what);

#ifdef __cplusplus
}
#endif
#endif
