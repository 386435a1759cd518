/* cli.h - what every `vreuse` command (and vreuse_glref) shares: option tables parsed with
 * getopt_long whose --help is generated from the same table, the options two commands share
 * (one definition each, so they mean the same, take the same forms and the same limits),
 * list and number parsing, output files written safely, run metadata, medians, scene labels.
 *
 * A command declares its options as a table and calls vr_cli_parse:
 *
 *     vr_cli_orders orders = {{VR_ORDER_FORSYTH}, 1};
 *     const vr_cli_opt opts[] = {
 *         VR_CLI_ORDER(&orders, "forsyth"),
 *         {0}};
 *     static const vr_cli_command cmd = {"sim", "SCENE...", "Simulates ...", NULL};
 *     vr_cli_args args;
 *     VR_CLI_PARSE_OR_RETURN(&cmd, opts, argc, argv, &args);
 *     // returned 0 after --help, 2 after a usage error (already printed)
 *
 * Every command also takes -q/--quiet (vr_progress_quiet: no progress output) and
 * --accept-repairs (vr_scene_set_accept_repairs), listed at the end of its --help.
 *
 * Parsers print nothing: they record the problem with vr_set_error and vr_cli_parse prints
 * "vreuse CMD: --opt 'value': problem" and returns 2.
 */
#ifndef VR_CLI_H
#define VR_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pipeline/limits.h"
#include "pipeline/vreuse.h"
#include "reuse/reuse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- option tables ------------------------------------------------------------------------ */

typedef struct vr_cli_opt vr_cli_opt;
/* Converts and validates `value` into o->dst; VR_OK, or VR_ERR_ARG with a message (no option
 * name: the caller adds it). */
typedef vr_status (*vr_cli_parse_fn)(const vr_cli_opt *o, const char *value);

struct vr_cli_opt {
    const char *name;      /* long name without "--": "order" */
    char short_name;       /* 'o' for -o, or 0 */
    const char *value;     /* how the value reads in --help ("LIST"); NULL: a flag */
    const char *help;      /* --help text, word-wrapped by vr_cli_help; '\n' forces a break */
    vr_cli_parse_fn parse; /* NULL for a flag: then *(int *)dst = flag_value */
    void *dst;             /* what parse fills (see each parser) */
    int flag_value;        /* flags: the value stored; parsers: unused */
    double lo, hi;         /* numeric parsers: accepted range, inclusive */
    uint32_t multiple;     /* integer parsers: the value must be a multiple of this (0: any) */
    const char *const *choices; /* vr_cli_parse_choice: NULL-terminated names */
};

/* What a command's operands are, so vr_cli_parse can check and register them. */
typedef enum vr_cli_operands {
    VR_CLI_OPERANDS_OWN = 0,      /* the command checks them itself */
    VR_CLI_SCENES,                /* scenes, at least one ("no scene given" otherwise) */
    VR_CLI_SCENES_OR_DEFAULT,     /* scenes; none: the embedded default scene */
    VR_CLI_SCENE_OR_DEFAULT,      /* at most one scene; none: the default scene */
    VR_CLI_ONE_SCENE              /* exactly one scene */
} vr_cli_operands;

typedef struct vr_cli_command {
    const char *name;     /* "sim": messages read "vreuse sim: ..." */
    const char *operands; /* usage line after the options: "SCENE...", "[SCENE]", "" */
    const char *about;    /* paragraph(s) under the usage line */
    const char *epilog;   /* text after the option list, or NULL */
    vr_cli_operands kind; /* scenes are registered as inputs (vr_cli_input) by vr_cli_parse */
} vr_cli_command;

/* Positional operands left after the options, in command-line order (pointers into argv). */
typedef struct vr_cli_args {
    char **v;
    int count;
} vr_cli_args;

#define VR_CLI_CONTINUE (-1) /* vr_cli_parse: options are fine, run the command */
#define VR_CLI_USAGE 2       /* exit code of a usage error */

/* Parses argv[1..argc-1] (argv[0] is the command name) against `opts` (terminated by an entry
 * with name NULL). -h/--help prints vr_cli_help to stdout and returns 0; an unknown option, a
 * missing value or a parser's refusal prints one line to stderr ("vreuse sim: --order 'x':
 * unknown order ...; see vreuse sim --help") and returns VR_CLI_USAGE. A value that is itself
 * an option of the table ("--csv --quiet") counts as missing. Scene operands (cmd->kind) are
 * checked and registered as inputs. Otherwise fills `args` with the operands (the default scene
 * when the kind allows none) and returns VR_CLI_CONTINUE. `--` ends the options; argv itself is
 * left in the order typed. */
int vr_cli_parse(const vr_cli_command *cmd, const vr_cli_opt *opts, int argc, char **argv,
                 vr_cli_args *args);

/* The usual start of a command: parses argv by the table and returns from the calling command
 * with vr_cli_parse's result unless it is VR_CLI_CONTINUE (help printed, a usage error). */
#define VR_CLI_PARSE_OR_RETURN(cmd, opts, argc, argv, args)                                  \
    do {                                                                                  \
        const int vr_cli_parse_rc_ = vr_cli_parse((cmd), (opts), (argc), (argv), (args)); \
        if (vr_cli_parse_rc_ != VR_CLI_CONTINUE)                                          \
            return vr_cli_parse_rc_;                                                      \
    } while (0)
/* The generated help: usage line, about, one entry per option (name, value, help), epilog. */
void vr_cli_help(FILE *f, const vr_cli_command *cmd, const vr_cli_opt *opts);
/* "vreuse CMD: " + message + "\n" on stderr (printf style); returns `rc`, for
 * `return vr_cli_fail(1, "sim", "...")`. */
int vr_cli_fail(int rc, const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Prints vr_last_error() as a failure of `cmd` (with its source location when the environment
 * sets VR_DEBUG=1) and returns 1. */
int vr_cli_fail_last(const char *cmd);
/* Ends a command: flushes stdout and turns a failed write to it (a full disk, a closed pipe)
 * into exit code 1 with a message; returns `rc` otherwise. main() calls it once. */
int vr_cli_finish(const char *cmd, int rc);

/* ---- parsers for the table (dst types in the comments) ------------------------------------ */

vr_status vr_cli_parse_u32(const vr_cli_opt *o, const char *v);    /* uint32_t, lo..hi, multiple */
vr_status vr_cli_parse_u64(const vr_cli_opt *o, const char *v);    /* uint64_t, lo..hi */
vr_status vr_cli_parse_int(const vr_cli_opt *o, const char *v);    /* int, lo..hi */
vr_status vr_cli_parse_float(const vr_cli_opt *o, const char *v);  /* float, lo..hi, finite */
vr_status vr_cli_parse_string(const vr_cli_opt *o, const char *v); /* const char *, non-empty */
vr_status vr_cli_parse_choice(const vr_cli_opt *o, const char *v); /* int: index in choices */
vr_status vr_cli_parse_path(const vr_cli_opt *o, const char *v);   /* const char *: a file path
                                                                      or "-", < 4096 bytes */
vr_status vr_cli_parse_size(const vr_cli_opt *o, const char *v);   /* uint32_t[2]: WxH, each
                                                                      1..hi */

/* Comma lists. Each refuses an empty list, an empty item, a repeated item and more than the
 * list holds; the message names the item and the accepted values. */
#define VR_CLI_MAX_LIST 16

typedef struct vr_cli_orders {
    int v[VR_CLI_MAX_LIST]; /* vr_order values, VR_ORDER_FETCH may be or-ed in */
    int count;
} vr_cli_orders;
vr_status vr_cli_parse_orders(const vr_cli_opt *o, const char *v);

typedef struct vr_cli_strategies {
    const vr_reuse_ops *v[VR_REUSE_KIND_COUNT]; /* registry rows, in the order given */
    int count;
} vr_cli_strategies;
/* Names of the registry or "all" (every strategy, registry order). */
vr_status vr_cli_parse_strategies(const vr_cli_opt *o, const char *v);

typedef struct vr_cli_loads {
    uint32_t v[VR_CLI_MAX_LIST];      /* dependent FMA steps per invocation, <= VR_LOAD_MAX */
    char name[VR_CLI_MAX_LIST][24];   /* as given: "heavy", "loop:3000", "3000" */
    int count;
} vr_cli_loads;
/* simple, light, medium, heavy (reuse/reuse.h), loop:N or N (k/M suffixes), N <= VR_LOAD_MAX. */
vr_status vr_cli_parse_loads(const vr_cli_opt *o, const char *v);

typedef struct vr_cli_u32s {
    uint32_t v[VR_CLI_MAX_LIST];
    int count;
} vr_cli_u32s;
/* Each item as vr_cli_parse_u32 (lo..hi, multiple). */
vr_status vr_cli_parse_u32s(const vr_cli_opt *o, const char *v);

typedef struct vr_cli_choices {
    int v[VR_CLI_MAX_LIST]; /* indices into o->choices */
    int count;
} vr_cli_choices;
/* Each item one of o->choices; "all" (when not itself a choice) selects every one. */
vr_status vr_cli_parse_choices(const vr_cli_opt *o, const char *v);

/* Splits a comma list into at most `max` items, each copied into item[k] (size bytes each).
 * Returns the count, or -1 with a message (empty item, item too long, too many items). */
int vr_cli_split(const char *s, char *items, size_t size, int max);

/* Largest image side (raster/raster.h VR_RASTER_MAX_SIZE; checked equal in cli.c). */
#define VR_CLI_MAX_IMAGE 8192

/* ---- shared options: one definition each ------------------------------------------------ */

#define VR_CLI_ORDER(dst, deflt)                                                                \
    {"order", 0, "LIST",                                                                        \
     "triangle orders, comma separated: file, forsyth, tipsify (fifo), random; +fetch "        \
     "after one renumbers vertices in first-use order (default " deflt ")",                     \
     vr_cli_parse_orders, (dst), 0, 0, 0, 0, NULL}
#define VR_CLI_SEED(dst)                                                                        \
    {"seed", 0, "N", "seed of --order random (default 1)", vr_cli_parse_u64, (dst), 0, 0,       \
     18446744073709551615.0, 0, NULL}
#define VR_CLI_STRATEGY(dst, deflt)                                                             \
    {"strategy", 0, "LIST",                                                                     \
     "strategies, comma separated: naive, warp, hash, phash, sort, multi, patch, meshlet, or "  \
     "all "                                                                                     \
     "(default " deflt ")",                                                                     \
     vr_cli_parse_strategies, (dst), 0, 0, 0, 0, NULL}
#define VR_CLI_LOAD(dst, deflt)                                                                 \
    {"load", 0, "LIST",                                                                         \
     "vertex shader loads, comma separated: simple, light, medium, heavy (the calibrated "    \
     "1200/2336/4416 FMA steps), loop:N or N steps, N <= 16M (default " deflt ")",             \
     vr_cli_parse_loads, (dst), 0, 0, 0, 0, NULL}
#define VR_CLI_BLOCK(dst, deflt)                                                                \
    {"block", 0, "LIST",                                                                        \
     "threads per block, comma separated (default " deflt ")",                                 \
     vr_cli_parse_u32s, (dst), 0, VR_BLOCK_MIN, VR_BLOCK_MAX, 32, NULL}
#define VR_CLI_NU(dst)                                                                          \
    {"nu", 0, "N",                                                                              \
     "dynamic batches and the patch / meshlet plans: at most N distinct vertices per batch, "  \
     "N_u (default 256, or --limits auto's choice; meshlets take at most 255)",                  \
     vr_cli_parse_u32, (dst), 0, VR_NU_MIN, VR_NU_MAX, 0, NULL}
#define VR_CLI_MAX_INDICES(dst)                                                                 \
    {"max-indices", 0, "N",                                                                     \
     "dynamic batches and the patch / meshlet plans: at most N indices per batch "             \
     "(default 1023, or --limits auto's choice; sort needs block size >= N / 32)",              \
     vr_cli_parse_u32, (dst), 0, VR_MAX_INDICES_MIN, VR_MAX_INDICES_MAX, 3, NULL}
#define VR_CLI_WARP_BATCH(dst)                                                                  \
    {"warp-batch", 0, "N",                                                                      \
     "warp voting: N indices per static batch (default 96, auto and paper alike)",             \
     vr_cli_parse_u32, (dst), 0, VR_WARP_BATCH_MIN, VR_WARP_BATCH_MAX, 3, NULL}
/* Batch limits (reuse/reuse.h vr_batch_limits_auto): --limits auto|paper and --sms N, plus the
 * explicit --block / --nu / --max-indices / --warp-batch, which win field by field. */
typedef struct vr_cli_limits {
    int automatic;         /* --limits: 0 the paper's fixed sizes (the default), 1 auto */
    uint32_t sms;          /* --sms: SMs of the GPU to choose for; 0: not given */
    vr_batch_limits given; /* explicit values; 0: not given (then --limits decides) */
} vr_cli_limits;
extern const char *const vr_cli_limits_names[]; /* "paper", "auto" */
#define VR_CLI_LIMITS(dst)                                                                      \
    {"limits", 0, "paper|auto",                                                                 \
     "batch limits (block, N_u, max indices): paper (default): the paper's fixed sizes (block " \
     "256, N_u 256, 1023 indices, warp batch 96); auto chooses them per scene and strategy "   \
     "from the mesh size and the GPU's SM count so small meshes make more batches (measured "  \
     "on the H100: no faster on the shared scenes, see README); explicit --block, --nu, "      \
     "--max-indices, --warp-batch win",                                                         \
     vr_cli_parse_choice, &(dst)->automatic, 0, 0, 0, 0, vr_cli_limits_names}
#define VR_CLI_SMS(dst, what)                                                                   \
    {"sms", 0, "N",                                                                             \
     "--limits auto: choose for a GPU of N multiprocessors, " what " (default 132, the H100)", \
     vr_cli_parse_u32, &(dst)->sms, 0, VR_SMS_MIN, VR_SMS_MAX, 0, NULL}
/* The limits strategy `kind` runs with on a mesh of `triangles` / `vertex_count`: the paper's
 * or vr_batch_limits_auto for `gpu` (NULL: an H100 shape with --sms or 132 SMs; a given --sms
 * replaces gpu's SM count), then the explicit fields. VR_ERR_ARG from vr_batch_limits_auto. */
vr_status vr_cli_limits_resolve(vr_batch_limits *out, const vr_cli_limits *l, vr_reuse_kind kind,
                                uint32_t triangles, uint32_t vertex_count,
                                const vr_gpu_shape *gpu);
/* "auto (132 SMs)" or "paper": how the limits were chosen, for tables and metadata. */
void vr_cli_limits_label(char *buf, size_t size, const vr_cli_limits *l, const vr_gpu_shape *gpu);

#define VR_CLI_REPS(dst, deflt)                                                                 \
    {"reps", 0, "N", "timed repetitions after the warm-up (default " deflt ")",             \
     vr_cli_parse_int, (dst), 0, 1, VR_REPS_MAX, 0, NULL}
#define VR_CLI_SIZE(dst, deflt)                                                                 \
    {"size", 0, "WxH", "image size in pixels, width and height each (default " deflt ")",    \
     vr_cli_parse_size, (dst), 0, 1, VR_CLI_MAX_IMAGE, 0, NULL}
#define VR_CLI_YAW(dst)                                                                         \
    {"yaw", 0, "DEG", "orbit angle about +y (default 0: looking along -z)",                    \
     vr_cli_parse_float, (dst), 0, -3600, 3600, 0, NULL}
#define VR_CLI_PITCH(dst)                                                                       \
    {"pitch", 0, "DEG", "angle above the horizon (default 15)", vr_cli_parse_float,            \
     (dst), 0, -89, 89, 0, NULL}
#define VR_CLI_ZOOM(dst)                                                                        \
    {"zoom", 0, "Z", "1 fits the bounding sphere, 2 halves the distance (default 1)",          \
     vr_cli_parse_float, (dst), 0, 0.01, 100, 0, NULL}
#define VR_CLI_CPU(dst)                                                                         \
    {"cpu", 0, NULL, "run the CPU twins even when a CUDA device is present", NULL, (dst), 1, 0, \
     0, 0, NULL}
#define VR_CLI_CSV(dst)                                                                         \
    {"csv", 0, "FILE", "also write the results as CSV to FILE ('-': standard output)",          \
     vr_cli_parse_path, (dst), 0, 0, 0, 0, NULL}
#define VR_CLI_OUT(dst, what)                                                                   \
    {"out", 'o', "FILE", what, vr_cli_parse_path, (dst), 0, 0, 0, 0, NULL}
extern const char *const vr_cli_patch_builder_names[]; /* "cpu", "gpu" (vr_patch_builder) */
#define VR_CLI_PATCH_BUILDER(dst, what)                                                         \
    {"patch-builder", 0, "cpu|gpu",                                                             \
     "who builds the patch plan: cpu (default: the sequential builder) or gpu (the "          \
     "data-parallel builder; where no GPU runs, its CPU reference, the same plan); " what,     \
     vr_cli_parse_choice, (dst), 0, 0, 0, 0, vr_cli_patch_builder_names}
/* GTS restart modes (pipeline/gts/gts.h): index k of the list is vr_gts_restart k. */
extern const char *const vr_cli_restart_names[]; /* "r", "deg" */
#define VR_CLI_RESTART(dst, deflt)                                                              \
    {"restart", 0, "LIST",                                                                      \
     "GTS restart modes, comma separated: r (explicit restart codes, 2-bit strip codes), deg "   \
     "(restarts emulated by degenerate triangles, 1-bit codes) or all (default " deflt ")",      \
     vr_cli_parse_choices, (dst), 0, 0, 0, 0, vr_cli_restart_names}

/* ---- output files ------------------------------------------------------------------------- */

/* Inputs of the running command (scene files, a CSV to plot). vr_cli_out_open refuses to write
 * over any of them (the same file, through any name or link), and over a file another output
 * of the same run already wrote. Paths that name no file (generators) are ignored. */
void vr_cli_input(const char *path);

/* Checks early, before long work, that `path` could be written under the rules below (not an
 * input, not an earlier output, its folder exists and is writable); writes nothing. */
vr_status vr_cli_out_check(const char *path, const char *what);

/* An output written safely: into a temporary file in the destination's folder, renamed over the
 * destination only by vr_cli_out_close after every write and the close succeeded; on any
 * failure the temporary goes and the destination is untouched. A destination that is not a
 * regular file (/dev/null, a pipe, a terminal) is written directly and never removed; a
 * symbolic link is followed, so the file it points to is replaced and the link stays. "-" is
 * stdout. */
typedef struct vr_cli_out {
    FILE *f;          /* write here */
    char *path;       /* the destination as the user named it (for messages) */
    char *target;     /* the file renamed over (links resolved), NULL when written directly */
    char *temp;       /* the temporary file, NULL when written directly */
    int is_stdout;
} vr_cli_out;

/* `what` names the output in messages ("CSV", "PNG"). VR_ERR_ARG when the destination is one of
 * the inputs or an earlier output, VR_ERR_IO when the folder cannot take a file. */
vr_status vr_cli_out_open(vr_cli_out *o, const char *path, const char *what);
/* Flushes, checks every write, closes and renames into place; VR_ERR_IO naming the path when
 * anything failed (then the destination is untouched). Accepts a never-opened (zeroed) struct. */
vr_status vr_cli_out_close(vr_cli_out *o);
/* Gives up an output: closes and removes the temporary, never the destination. */
void vr_cli_out_abort(vr_cli_out *o);
/* For writers that take a path themselves (PNG, .gts, SVG): calls fn(file, ctx) with a
 * temporary file's name (or the destination itself when it is no regular file) under the rules
 * of vr_cli_out_open, then moves the result into place; when fn fails its status is returned and
 * the destination is untouched. */
typedef vr_status (*vr_cli_path_writer)(const char *file, void *ctx);
vr_status vr_cli_write_via(const char *path, const char *what, vr_cli_path_writer fn, void *ctx);

/* ---- names and paths ---------------------------------------------------------------------- */

/* The scene's label in tables and CSV: the file name without folders ("stanford-bunny.obj@7M"),
 * or the generator spec ("sphere:7M"). Points into `spec`. */
const char *vr_cli_scene_label(const char *spec);
/* An output per (scene, order) from one base path: "out.png" + "bunny.obj", "forsyth" ->
 * "out-bunny.obj-forsyth.png" (either part may be NULL or ""). Characters other than letters,
 * digits, '.', '-' and '_' in the labels become '_'. When two inputs of the run (vr_cli_input)
 * share a file name in different folders, the whole path names the scene ("a/x.obj" ->
 * "out-a_x.obj.png"), so distinct inputs get distinct outputs. malloc'd; NULL when out of
 * memory. */
char *vr_cli_output_path(const char *base, const char *scene, const char *order);
/* 1 when another input of the run has the same file name as `spec` in another folder. */
int vr_cli_label_shared(const char *spec);
/* Writes `s` as one CSV field: quoted (with "" for ") when it holds a comma, quote or newline. */
void vr_cli_csv_field(FILE *f, const char *s);

/* "vreuse " + argv as typed, words with spaces or quotes in single quotes (captions, metadata).
 * malloc'd; NULL when out of memory. */
char *vr_cli_command_line(int argc, char **argv);

/* ---- numbers ------------------------------------------------------------------------------ */

/* Sorts v[0..n) and returns its median (n > 0). */
double vr_cli_median(double *v, int n);
float vr_cli_median_float(float *v, int n);

/* ---- run metadata (benchmarks) ------------------------------------------------------------ */

typedef struct vr_cli_meta {
    char gpu[256], driver[64], cuda[32], date[64], commit[64], command[1024];
    double bandwidth; /* measured D2D bytes per second (read + write); 0 when not measured */
    int sm_count, clock_khz;
} vr_cli_meta;

/* GPU name, CUDA runtime, SM count and clock from the device; the driver from env
 * VR_GPU_DRIVER or nvidia-smi; the commit from env VR_GIT_COMMIT or git; the date (UTC) and the
 * command line ("vreuse " + argv, words with spaces quoted). bandwidth is left 0. */
void vr_cli_meta_fill(vr_cli_meta *m, int argc, char **argv);
/* The metadata as comment lines ("# gpu: ...", prefix "# " for CSV, "- " for Markdown). */
void vr_cli_meta_write(FILE *f, const vr_cli_meta *m, const char *prefix);

/* The outputs and metadata of a GPU benchmark command with --csv and --md (bench,
 * bench-compact). */
typedef struct vr_cli_bench_out {
    vr_cli_out csv, md; /* --csv and --md; f is NULL when not asked for */
    FILE *human;        /* the human-readable lines: stdout, or stderr when --csv - or --md -
                           takes stdout (then a command leaves its table out) */
    vr_cli_meta meta;   /* with the D2D copy bandwidth; 0 when it could not be measured */
} vr_cli_bench_out;
/* The start of such a command, after its options: opens --csv and --md (NULL: not asked for)
 * first, so a bad path fails before the device is looked for or anything is measured; then
 * needs a CUDA device (`no_device` ends the message: what the command needs and what to use
 * instead), fills the metadata, measures the copy bandwidth (a warning when it cannot) and
 * prints "# GPU, driver, CUDA, D2D copy" to b->human. 0, or 1 with the message printed and both
 * outputs given up. */
int vr_cli_bench_begin(vr_cli_bench_out *b, const char *cmd, const char *csv, const char *md,
                       const char *no_device, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
