/* fuzz_cli.c - libFuzzer target for the command-line layer (pipeline/cli/cli.c): vr_cli_parse on
 * random argv against one table that holds every parser and every shared option (VR_CLI_*), each
 * parser called directly on every word, vr_cli_split, and vr_cli_help on tables made from the
 * input. Invariants: vr_cli_parse returns 0 (help on stdout), 2 (one message on stderr, starting
 * "vreuse fuzz: ") or VR_CLI_CONTINUE (nothing printed); argv keeps its strings; every value a
 * parser accepted lies in its option's range, lists hold 1..16 distinct items. Prints nothing:
 * stdout and stderr go to memory while the parser runs. Built only with clang -fsanitize=fuzzer:
 *   fuzz_cli CORPUS/   (tests/fuzz.sh writes seeds: words separated by NUL bytes)
 */
#define _GNU_SOURCE /* open_memstream */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cli/cli.h"
#include "scenes/scene.h"

#define MAX_WORDS 48 /* argv words taken from one input */

/* What the table fills. Each run starts from the 0xa5 pattern, so a value that differs from it
 * was written by a parser and must be valid. */
typedef struct dsts {
    vr_cli_orders orders;
    uint64_t seed;
    vr_cli_strategies strategies;
    vr_cli_loads loads;
    vr_cli_u32s block, counts;
    uint32_t nu, max_indices, warp_batch, any;
    int reps, level, cpu, quiet, verbose, mode;
    uint32_t size[2];
    float yaw, pitch, zoom, ratio;
    const char *csv, *out, *name;
    vr_cli_choices restart, kinds, many;
    vr_cli_limits limits;
    int patch_builder;
    float epsilon;                          /* vreuse apply's own options */
    int device, placement, slice, inner, check;
    uint32_t agents, steps;
} dsts;

static dsts d;
static const char *const kinds[] = {"x", "all", "y", NULL}; /* "all" is itself a choice */
static const char *const many[] = {"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9",
                                   "c10", "c11", "c12", "c13", "c14", "c15", "c16", "c17", NULL};
static const char *const modes[] = {"fast", "exact", "off", NULL};
static const char *const devices[] = {"auto", "cpu", "gpu", NULL};
static const char *const placements[] = {"random", "sorted", NULL};
static const char *const slices[] = {"auto", "x", "y", "z", NULL};

/* every shared option, then one entry per parser with other parameters (short names, no
 * multiple, a range to UINT32_MAX, fractions, more choices than a list holds, a label too long
 * for its column) */
static const vr_cli_opt opts[] = {
    VR_CLI_ORDER(&d.orders, "forsyth"),
    VR_CLI_SEED(&d.seed),
    VR_CLI_STRATEGY(&d.strategies, "all"),
    VR_CLI_LOAD(&d.loads, "simple"),
    VR_CLI_BLOCK(&d.block, "256"),
    VR_CLI_NU(&d.nu),
    VR_CLI_MAX_INDICES(&d.max_indices),
    VR_CLI_WARP_BATCH(&d.warp_batch),
    VR_CLI_REPS(&d.reps, "20"),
    VR_CLI_SIZE(d.size, "1280x720"),
    VR_CLI_YAW(&d.yaw),
    VR_CLI_PITCH(&d.pitch),
    VR_CLI_ZOOM(&d.zoom),
    VR_CLI_CPU(&d.cpu),
    VR_CLI_CSV(&d.csv),
    VR_CLI_OUT(&d.out, "output file"),
    VR_CLI_RESTART(&d.restart, "r"),
    VR_CLI_LIMITS(&d.limits),
    VR_CLI_SMS(&d.limits, "fuzz"),
    VR_CLI_PATCH_BUILDER(&d.patch_builder, "fuzz"),
    {"any", 'n', "N", "any 32-bit number", vr_cli_parse_u32, &d.any, 0, 0, 4294967295.0, 0, NULL},
    {"level", 'l', "N", "", vr_cli_parse_int, &d.level, 0, 0, 2147483647.0, 0, NULL},
    {"ratio", 0, "R", "a fraction", vr_cli_parse_float, &d.ratio, 0, -0.5, 0.75, 0, NULL},
    {"name", 0, "S", "a name\nwith a forced break", vr_cli_parse_string, &d.name, 0, 0, 0, 0,
     NULL},
    {"mode", 'm', "M", "one of fast, exact, off", vr_cli_parse_choice, &d.mode, 0, 0, 0, 0, modes},
    {"counts", 0, "LIST", "any numbers", vr_cli_parse_u32s, &d.counts, 0, 0, 1e9, 0, NULL},
    {"kinds", 0, "LIST", "x, all, y", vr_cli_parse_choices, &d.kinds, 0, 0, 0, 0, kinds},
    {"many", 0, "LIST", "c0..c17", vr_cli_parse_choices, &d.many, 0, 0, 0, 0, many},
    {"verbose-option-with-a-label-longer-than-its-column", 'v', NULL, NULL, NULL, &d.verbose, 7,
     0, 0, 0, NULL},
    /* `vreuse apply`'s own options (pipeline/cli/apply_cmd.c), as its tables declare them */
    {"epsilon", 0, "FRACTION", "a fraction of the box diagonal", vr_cli_parse_float, &d.epsilon,
     0, 1e-4, 1, 0, NULL},
    {"device", 0, "auto|cpu|gpu", "where", vr_cli_parse_choice, &d.device, 0, 0, 0, 0, devices},
    {"placement", 0, "random|sorted", "order", vr_cli_parse_choice, &d.placement, 0, 0, 0, 0,
     placements},
    {"slice", 0, "auto|x|y|z", "axis", vr_cli_parse_choice, &d.slice, 0, 0, 0, 0, slices},
    {"agents", 0, "N", "agents", vr_cli_parse_u32, &d.agents, 0, 1, 1e8, 0, NULL},
    {"steps", 0, "N", "steps", vr_cli_parse_u32, &d.steps, 0, 1, 1000, 0, NULL},
    {"inner", 0, NULL, "a flag", NULL, &d.inner, 1, 0, 0, 0, NULL},
    {"check", 0, NULL, "a flag", NULL, &d.check, 1, 0, 0, 0, NULL},
    {0}};
#define OPT_COUNT ((int)(sizeof opts / sizeof opts[0]) - 1)

/* bytes of o->dst each parser writes (NULL: a flag) */
static const struct {
    vr_cli_parse_fn parse;
    size_t bytes;
} dst_sizes[] = {
    {NULL, sizeof(int)},
    {vr_cli_parse_int, sizeof(int)},
    {vr_cli_parse_choice, sizeof(int)},
    {vr_cli_parse_u32, sizeof(uint32_t)},
    {vr_cli_parse_u64, sizeof(uint64_t)},
    {vr_cli_parse_float, sizeof(float)},
    {vr_cli_parse_string, sizeof(const char *)},
    {vr_cli_parse_path, sizeof(const char *)},
    {vr_cli_parse_size, 2 * sizeof(uint32_t)},
    {vr_cli_parse_orders, sizeof(vr_cli_orders)},
    {vr_cli_parse_strategies, sizeof(vr_cli_strategies)},
    {vr_cli_parse_loads, sizeof(vr_cli_loads)},
    {vr_cli_parse_u32s, sizeof(vr_cli_u32s)},
    {vr_cli_parse_choices, sizeof(vr_cli_choices)},
};

static size_t dst_bytes(const vr_cli_opt *o)
{
    for (size_t i = 0; i < sizeof dst_sizes / sizeof dst_sizes[0]; ++i)
        if (dst_sizes[i].parse == o->parse)
            return dst_sizes[i].bytes;
    abort(); /* a parser this target does not know: add it above and in check_value */
}

static int choice_count(const char *const *c)
{
    int n = 0;
    while (c[n])
        ++n;
    return n;
}

static int whole_ok(const vr_cli_opt *o, uint64_t x)
{
    return (double)x >= o->lo && (double)x <= o->hi && (o->multiple < 2 || x % o->multiple == 0);
}

/* A list a parser filled: 1..max items, none twice (items compared as bytes). */
static void check_list(const void *items, int count, int max, size_t size)
{
    const char *v = items;
    if (count < 1 || count > max)
        abort();
    for (int i = 0; i < count; ++i)
        for (int k = 0; k < i; ++k)
            if (!memcmp(v + (size_t)i * size, v + (size_t)k * size, size))
                abort();
}

/* A value a parser wrote must be one its option accepts. */
static void check_value(const vr_cli_opt *o)
{
    const vr_cli_parse_fn p = o->parse;
    if (!p) {
        if (*(int *)o->dst != o->flag_value)
            abort();
    } else if (p == vr_cli_parse_u32) {
        if (!whole_ok(o, *(uint32_t *)o->dst))
            abort();
    } else if (p == vr_cli_parse_u64) {
        if (!whole_ok(o, *(uint64_t *)o->dst))
            abort();
    } else if (p == vr_cli_parse_int) {
        const int v = *(int *)o->dst;
        if (v < 0 || !whole_ok(o, (uint64_t)v))
            abort();
    } else if (p == vr_cli_parse_float) {
        const float v = *(float *)o->dst;
        if (!(v >= (float)o->lo && v <= (float)o->hi))
            abort();
    } else if (p == vr_cli_parse_string || p == vr_cli_parse_path) {
        const char *s = *(const char **)o->dst;
        if (!s || !*s || (p == vr_cli_parse_path && strlen(s) >= 4096))
            abort();
    } else if (p == vr_cli_parse_choice) {
        const int k = *(int *)o->dst;
        if (k < 0 || k >= choice_count(o->choices))
            abort();
    } else if (p == vr_cli_parse_size) {
        const uint32_t *wh = (const uint32_t *)o->dst;
        if (wh[0] < 1 || wh[1] < 1 || wh[0] > o->hi || wh[1] > o->hi)
            abort();
    } else if (p == vr_cli_parse_orders) {
        const vr_cli_orders *r = (const vr_cli_orders *)o->dst;
        check_list(r->v, r->count, VR_CLI_MAX_LIST, sizeof r->v[0]);
        for (int i = 0; i < r->count; ++i)
            if ((r->v[i] & ~VR_ORDER_FETCH) < 0 || (r->v[i] & ~VR_ORDER_FETCH) >= VR_ORDER_COUNT)
                abort();
    } else if (p == vr_cli_parse_strategies) {
        const vr_cli_strategies *r = (const vr_cli_strategies *)o->dst;
        check_list(r->v, r->count, VR_REUSE_KIND_COUNT, sizeof r->v[0]);
        for (int i = 0; i < r->count; ++i)
            if (r->v[i] < &vr_reuse_all[0] || r->v[i] >= &vr_reuse_all[VR_REUSE_KIND_COUNT])
                abort();
    } else if (p == vr_cli_parse_loads) { /* names distinct (the parser zeroes their tails) */
        const vr_cli_loads *r = (const vr_cli_loads *)o->dst;
        check_list(r->name, r->count, VR_CLI_MAX_LIST, sizeof r->name[0]);
        for (int i = 0; i < r->count; ++i)
            if (r->v[i] > VR_LOAD_MAX || !memchr(r->name[i], '\0', sizeof r->name[i]) ||
                !r->name[i][0])
                abort();
    } else if (p == vr_cli_parse_u32s) {
        const vr_cli_u32s *r = (const vr_cli_u32s *)o->dst;
        check_list(r->v, r->count, VR_CLI_MAX_LIST, sizeof r->v[0]);
        for (int i = 0; i < r->count; ++i)
            if (!whole_ok(o, r->v[i]))
                abort();
    } else if (p == vr_cli_parse_choices) {
        const vr_cli_choices *r = (const vr_cli_choices *)o->dst;
        check_list(r->v, r->count, VR_CLI_MAX_LIST, sizeof r->v[0]);
        for (int i = 0; i < r->count; ++i)
            if (r->v[i] < 0 || r->v[i] >= choice_count(o->choices))
                abort();
    } else {
        abort();
    }
}

/* The table after a parse: each destination untouched (still the pattern) or valid. */
static void check_table(const dsts *pattern)
{
    for (const vr_cli_opt *o = opts; o->name; ++o) {
        const size_t off = (size_t)((const char *)o->dst - (const char *)&d);
        if (memcmp(o->dst, (const char *)pattern + off, dst_bytes(o)))
            check_value(o);
    }
}

/* Runs fn(ctx) with stdout and stderr going to memory (glibc's standard streams are plain
 * variables); out/err are malloc'd, NUL-terminated. */
static int captured(int (*fn)(void *), void *ctx, char **out, size_t *out_len, char **err,
                    size_t *err_len)
{
    FILE *fo = open_memstream(out, out_len), *fe = open_memstream(err, err_len);
    if (!fo || !fe)
        abort();
    FILE *saved_out = stdout, *saved_err = stderr;
    stdout = fo;
    stderr = fe;
    const int rc = fn(ctx);
    stdout = saved_out;
    stderr = saved_err;
    fclose(fo);
    fclose(fe);
    return rc;
}

typedef struct parse_run {
    int argc;
    char **argv;
    vr_cli_args args;
} parse_run;

static int run_parse(void *ctx)
{
    static const vr_cli_command cmd = {"fuzz", "ARG...", "Fuzzing the option table.", "Epilog.",
                                       VR_CLI_OPERANDS_OWN};
    parse_run *r = ctx;
    return vr_cli_parse(&cmd, opts, r->argc, r->argv, &r->args);
}

static int in_argv(const parse_run *r, const char *s)
{
    for (int i = 0; i < r->argc; ++i)
        if (s >= r->argv[i] && s <= r->argv[i] + strlen(r->argv[i]))
            return 1;
    return 0;
}

/* vr_cli_parse on argv = "fuzz" + words. */
static void fuzz_parse(char **words, int count)
{
    size_t text = 0;
    for (int i = 0; i < count; ++i)
        text += strlen(words[i]);
    char *argv[MAX_WORDS + 2], *before[MAX_WORDS + 2];
    argv[0] = "fuzz";
    for (int i = 0; i < count; ++i)
        argv[i + 1] = words[i];
    argv[count + 1] = NULL;
    memcpy(before, argv, sizeof argv);
    parse_run r = {count + 1, argv, {NULL, -1}};

    memset(&d, 0xa5, sizeof d);
    const dsts pattern = d;
    vr_scene_set_accept_repairs(0);
    char *out = NULL, *err = NULL;
    size_t out_len = 0, err_len = 0;
    const int rc = captured(run_parse, &r, &out, &out_len, &err, &err_len);

    /* getopt may reorder argv (operands after options) but never changes a word */
    for (int i = 0; i <= count; ++i) {
        int found = 0;
        for (int k = 0; k <= count && !found; ++k)
            found = argv[i] == before[k];
        if (!found)
            abort();
    }
    if (argv[count + 1] != NULL)
        abort();
    if (rc == 0) { /* --help: the whole table on stdout, nothing else */
        if (err_len || strncmp(out, "usage: vreuse fuzz ARG... [options]\n", 36))
            abort();
        for (const vr_cli_opt *o = opts; o->name; ++o) {
            char label[128];
            snprintf(label, sizeof label, "--%s", o->name);
            if (!strstr(out, label))
                abort();
        }
    } else if (rc == VR_CLI_USAGE) { /* one message naming the command; no flood */
        if (out_len || err_len < 14 || strncmp(err, "vreuse fuzz: ", 13) ||
            err[err_len - 1] != '\n' || err_len > 3 * text + 1024)
            abort();
    } else if (rc == VR_CLI_CONTINUE) {
        if (out_len || err_len)
            abort();
        if (r.args.count < 0 || r.args.count > count)
            abort();
        for (int i = 0; i < r.args.count; ++i) { /* operands are words of argv */
            int found = 0;
            for (int k = 1; k <= count && !found; ++k)
                found = r.args.v[i] == before[k];
            if (!found)
                abort();
        }
        check_table(&pattern);
        for (const vr_cli_opt *o = opts; o->name; ++o)
            if ((o->parse == vr_cli_parse_string || o->parse == vr_cli_parse_path) &&
                memcmp(o->dst, (const char *)&pattern + ((const char *)o->dst - (const char *)&d),
                       sizeof(char *)) &&
                !in_argv(&r, *(const char **)o->dst))
                abort(); /* strings point into argv */
    } else {
        abort();
    }
    free(out);
    free(err);
}

/* Every parser on one word, directly: VR_OK with a valid value, or VR_ERR_ARG with a message. */
static void fuzz_parsers(const char *word)
{
    for (const vr_cli_opt *o = opts; o->name; ++o) {
        if (!o->parse)
            continue;
        memset(o->dst, 0xa5, dst_bytes(o));
        vr_set_error(VR_OK, "%s", "");
        const vr_status s = o->parse(o, word);
        if (s == VR_OK)
            check_value(o);
        else if (s != VR_ERR_ARG || !vr_last_error()[0])
            abort();
    }
}

/* vr_cli_split into exactly max x size bytes: -1 with a message, or n items that are non-empty,
 * shorter than size, and joined with commas give the word back. */
static void fuzz_split(const char *word, uint8_t shape)
{
    const size_t size = 1 + (shape & 63);
    const int max = 1 + (shape >> 6) * 5;
    char *items = malloc((size_t)max * size);
    if (!items)
        return;
    vr_set_error(VR_OK, "%s", "");
    const int n = vr_cli_split(word, items, size, max);
    if (n < 0) {
        if (n != -1 || !vr_last_error()[0])
            abort();
    } else {
        if (n < 1 || n > max)
            abort();
        const char *p = word;
        for (int i = 0; i < n; ++i) {
            const char *item = items + (size_t)i * size;
            const size_t len = strnlen(item, size);
            if (len == 0 || len >= size || strncmp(p, item, len) ||
                p[len] != (i + 1 < n ? ',' : '\0'))
                abort();
            p += len + 1;
        }
    }
    free(items);
}

typedef struct help_run {
    vr_cli_opt table[4];
    vr_cli_command cmd;
} help_run;

static int run_help(void *ctx)
{
    help_run *h = ctx;
    vr_cli_help(stdout, &h->cmd, h->table);
    return 0;
}

/* vr_cli_help with names, values and help texts taken from the input: it ends, and its output
 * stays in proportion to its text (at worst a line of indentation per character: "\n\n\n"). */
static void fuzz_help(char **words, int count)
{
    help_run h;
    memset(&h, 0, sizeof h);
    size_t text = 0;
    int n = 0;
    for (int i = 0; i + 2 < count && n < 3; i += 3, ++n) {
        h.table[n].name = words[i];
        h.table[n].value = words[i + 1][0] ? words[i + 1] : NULL;
        h.table[n].help = words[i + 2];
        h.table[n].short_name = words[i][0];
    }
    for (int i = 0; i < count; ++i)
        text += strlen(words[i]);
    h.cmd.name = count > 0 ? words[count - 1] : "fuzz";
    h.cmd.operands = count > 1 ? words[count - 2] : "";
    h.cmd.about = count > 2 ? words[0] : NULL;
    h.cmd.epilog = count > 3 ? words[1] : NULL;
    char *out = NULL, *err = NULL;
    size_t out_len = 0, err_len = 0;
    captured(run_help, &h, &out, &out_len, &err, &err_len);
    if (err_len || out_len > 32 * text + 4096)
        abort();
    free(out);
    free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input: words separated by NUL bytes. A word that starts with byte 1 becomes "--NAME" + the
 * rest of the word, one that starts with byte 2 "--NAME=" + the rest, NAME being option
 * (second byte) of the table, so mutations reach every option without a dictionary. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *words[MAX_WORDS];
    int count = 0;
    for (size_t i = 0; i < size && count < MAX_WORDS;) {
        const uint8_t *end = memchr(data + i, 0, size - i);
        const size_t len = end ? (size_t)(end - (data + i)) : size - i;
        const uint8_t *w = data + i;
        char *word;
        if (len >= 2 && (w[0] == 1 || w[0] == 2)) {
            const char *name = opts[w[1] % OPT_COUNT].name;
            const size_t n = strlen(name), rest = len - 2;
            word = malloc(2 + n + 1 + rest + 1);
            if (!word)
                break;
            int k = sprintf(word, "--%s%s", name, w[0] == 2 ? "=" : "");
            memcpy(word + k, w + 2, rest);
            word[k + rest] = '\0';
        } else {
            word = malloc(len + 1);
            if (!word)
                break;
            memcpy(word, w, len);
            word[len] = '\0';
        }
        words[count++] = word;
        i += len + 1;
    }
    fuzz_parse(words, count);
    for (int i = 0; i < count; ++i) {
        fuzz_parsers(words[i]);
        fuzz_split(words[i], (uint8_t)(size + (size_t)i * 37));
    }
    fuzz_help(words, count);
    for (int i = 0; i < count; ++i)
        free(words[i]);
    return 0;
}
