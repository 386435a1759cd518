/* cli.c - option tables and their parsers, the generated --help, failure messages and the
 * checked end of a command (cli.h). Output files: cli_out.c; names, medians, metadata:
 * cli_util.c. */
#define _GNU_SOURCE /* getopt_long, strtod on "nan"/"inf" refused explicitly below */
#include "pipeline/cli/cli.h"

#include "raster/raster.h"
#include "scenes/scene.h"

_Static_assert(VR_CLI_MAX_IMAGE == VR_RASTER_MAX_SIZE, "one image-size limit");

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- messages ----------------------------------------------------------------------------- */

int vr_cli_fail(int rc, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vreuse %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return rc;
}

int vr_cli_fail_last(const char *cmd)
{
    const char *debug = getenv("VR_DEBUG");
    const char *where = vr_last_error_where();
    if (debug && *debug && strcmp(debug, "0") && *where)
        return vr_cli_fail(1, cmd, "%s [%s]", vr_last_error(), where);
    return vr_cli_fail(1, cmd, "%s", vr_last_error());
}

int vr_cli_finish(const char *cmd, int rc)
{
    /* errno of the failed write survives fflush's second attempt in glibc; report it plainly */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        const int e = errno;
        fprintf(stderr, "vreuse %s: writing to standard output failed: %s\n", cmd,
                e ? strerror(e) : "write error");
        return 1;
    }
    return rc;
}

/* ---- help --------------------------------------------------------------------------------- */

static void opt_label(char *buf, size_t n, const vr_cli_opt *o)
{
    if (o->short_name)
        snprintf(buf, n, "-%c, --%s%s%s", o->short_name, o->name, o->value ? " " : "",
                 o->value ? o->value : "");
    else
        snprintf(buf, n, "    --%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
}

/* Prints `text` word-wrapped to `width` columns, every line indented to `col`; the first line
 * continues after `used` columns already printed. '\n' forces a break. */
static void wrap(FILE *f, const char *text, int col, int used, int width)
{
    const char *p = text;
    int first = 1;
    do {
        int room = width - col, len = 0, last_space = -1;
        while (p[len] && p[len] != '\n' && len < room) {
            if (p[len] == ' ')
                last_space = len;
            ++len;
        }
        if (p[len] && p[len] != '\n' && last_space > 0)
            len = last_space; /* break at the last space that fits */
        fprintf(f, "%*s%.*s\n", first ? col - used : col, "", len, p);
        first = 0;
        p += len;
        if (*p == ' ' || *p == '\n')
            ++p;
    } while (*p);
}

void vr_cli_help(FILE *f, const vr_cli_command *cmd, const vr_cli_opt *opts)
{
    fprintf(f, "usage: vreuse %s%s%s [options]\n", cmd->name, *cmd->operands ? " " : "",
            cmd->operands);
    if (cmd->about && *cmd->about)
        fprintf(f, "\n%s\n", cmd->about);
    fprintf(f, "\noptions:\n");
    const int col = 26, width = 98;
    for (const vr_cli_opt *o = opts; o->name; ++o) {
        char label[96];
        opt_label(label, sizeof label, o);
        int used = fprintf(f, "  %s", label);
        if (used >= col - 1) { /* a long label gets its own line */
            fputc('\n', f);
            used = 0;
        }
        /* a numeric option's range comes from its table entry (pipeline/limits.h), so the help
         * cannot drift from what the parser accepts */
        char text[1024];
        const char *help = o->help && *o->help ? o->help : "-";
        const int numeric = o->parse == vr_cli_parse_u32 || o->parse == vr_cli_parse_u64 ||
                            o->parse == vr_cli_parse_int || o->parse == vr_cli_parse_float ||
                            o->parse == vr_cli_parse_u32s || o->parse == vr_cli_parse_size;
        if (numeric && o->hi > o->lo && o->hi < 1e15) {
            char range[96];
            if (o->parse == vr_cli_parse_float)
                snprintf(range, sizeof range, "%g..%g", o->lo, o->hi);
            else
                snprintf(range, sizeof range, "%.0f..%.0f", o->lo, o->hi);
            if (!strstr(help, range)) {
                snprintf(text, sizeof text, "%s [%s%s%s]", help, range,
                         o->multiple > 1 ? ", a multiple of " : "",
                         o->multiple > 1 ? "" : "");
                if (o->multiple > 1)
                    snprintf(text + strlen(text) - 1, sizeof text - strlen(text) + 1, "%u]",
                             o->multiple);
                help = text;
            }
        }
        wrap(f, help, col, used, width);
    }
    fprintf(f, "  -q, --quiet%*sno progress output\n", col - 13, "");
    fprintf(f, "      --accept-repairs%*s", col - 22, "");
    wrap(f, "load broken scene files anyway: drop what cannot be drawn (with a warning and the "
         "count) instead of refusing the file", col, col, width);
    fprintf(f, "  -h, --help%*sthis text\n", col - 12, "");
    if (cmd->epilog && *cmd->epilog)
        fprintf(f, "\n%s\n", cmd->epilog);
}

/* getopt_long values of the options every command takes (table options are 256 + i) */
#define OPT_ACCEPT_REPAIRS 255
#define OPT_QUIET 254

/* ---- parsing ------------------------------------------------------------------------------ */

static int is_table_option(const vr_cli_opt *opts, const char *s)
{
    if (!strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "--accept-repairs") ||
        !strcmp(s, "-q") || !strcmp(s, "--quiet"))
        return 1;
    for (const vr_cli_opt *o = opts; o->name; ++o) {
        if (s[0] == '-' && s[1] == '-') {
            const size_t n = strlen(o->name);
            if (!strncmp(s + 2, o->name, n) && (s[2 + n] == '\0' || s[2 + n] == '='))
                return 1;
        } else if (s[0] == '-' && o->short_name && s[1] == o->short_name && s[2] == '\0') {
            return 1;
        }
    }
    return 0;
}

int vr_cli_parse(const vr_cli_command *cmd, const vr_cli_opt *opts, int argc, char **argv,
                 vr_cli_args *args)
{
    int n = 0;
    while (opts[n].name)
        ++n;
    struct option *lo = calloc((size_t)n + 4, sizeof *lo);
    char *shorts = malloc(3 * (size_t)n + 8);
    if (!lo || !shorts) {
        free(lo);
        free(shorts);
        return vr_cli_fail(1, cmd->name, "out of memory");
    }
    /* leading ':' : getopt reports a missing value as ':' instead of printing; leading '+' would
     * stop at the first operand, but options after operands are fine here (GNU permutation) */
    char *sp = shorts;
    *sp++ = ':';
    *sp++ = 'h';
    *sp++ = 'q';
    for (int i = 0; i < n; ++i) {
        lo[i].name = opts[i].name;
        lo[i].has_arg = opts[i].value ? required_argument : no_argument;
        lo[i].flag = NULL;
        lo[i].val = 256 + i;
        if (opts[i].short_name) {
            *sp++ = opts[i].short_name;
            if (opts[i].value)
                *sp++ = ':';
        }
    }
    *sp = '\0';
    lo[n].name = "help";
    lo[n].has_arg = no_argument;
    lo[n].val = 'h';
    lo[n + 1].name = "accept-repairs"; /* every command: see vr_scene_set_accept_repairs */
    lo[n + 1].has_arg = no_argument;
    lo[n + 1].val = OPT_ACCEPT_REPAIRS;
    lo[n + 2].name = "quiet"; /* every command: vr_progress_quiet */
    lo[n + 2].has_arg = no_argument;
    lo[n + 2].val = OPT_QUIET;

    /* getopt_long permutes the vector it parses (operands move to the end): parse a copy, so argv
     * stays as typed for the run metadata. The operands point into the copy, which lives until
     * the next parse. */
    static char **copy;
    free(copy);
    copy = malloc(((size_t)argc + 1) * sizeof *copy);
    if (!copy) {
        free(lo);
        free(shorts);
        return vr_cli_fail(1, cmd->name, "out of memory");
    }
    memcpy(copy, argv, (size_t)argc * sizeof *copy);
    copy[argc] = NULL;
    argv = copy;

    int rc = VR_CLI_CONTINUE;
    opterr = 0;
    optind = 0; /* glibc: 0 re-initialises, so a second command in one process parses afresh */
    for (;;) {
        int index = -1;
        const int c = getopt_long(argc, argv, shorts, lo, &index);
        if (c == -1)
            break;
        if (c == OPT_QUIET || c == 'q') {
            vr_progress_quiet = 1;
            continue;
        }
        if (c == OPT_ACCEPT_REPAIRS) {
            vr_scene_set_accept_repairs(1);
            continue;
        }
        if (c == 'h') {
            vr_cli_help(stdout, cmd, opts);
            rc = 0;
            break;
        }
        const char *bad = argv[optind - 1];
        if (c == '?') {
            if (optopt && optopt < 256)
                vr_cli_fail(0, cmd->name, "unknown option '-%c' (see vreuse %s --help)", optopt,
                            cmd->name);
            else
                vr_cli_fail(0, cmd->name, "unknown option '%s' (see vreuse %s --help)", bad,
                            cmd->name);
            rc = VR_CLI_USAGE;
            break;
        }
        if (c == ':') {
            vr_cli_fail(0, cmd->name, "%s needs a value (see vreuse %s --help)", bad, cmd->name);
            rc = VR_CLI_USAGE;
            break;
        }
        const vr_cli_opt *o = NULL;
        if (c >= 256)
            o = &opts[c - 256];
        else
            for (int i = 0; i < n && !o; ++i)
                if (opts[i].short_name == c)
                    o = &opts[i];
        if (!o->value) {
            *(int *)o->dst = o->flag_value;
            continue;
        }
        /* "--csv --quiet": the value is the next option, not a file name */
        if (is_table_option(opts, optarg) && strchr(argv[optind - 1], '=') == NULL) {
            vr_cli_fail(0, cmd->name, "--%s needs a value before %s (see vreuse %s --help)",
                        o->name, optarg, cmd->name);
            rc = VR_CLI_USAGE;
            break;
        }
        if (o->parse(o, optarg) != VR_OK) {
            vr_cli_fail(0, cmd->name, "--%s '%s': %s", o->name, optarg, vr_last_error());
            rc = VR_CLI_USAGE;
            break;
        }
    }
    if (rc == VR_CLI_CONTINUE) {
        static char *default_scene[] = {VR_DEFAULT_SCENE, NULL};
        char **v = argv + optind;
        int count = argc - optind;
        if ((cmd->kind == VR_CLI_SCENES || cmd->kind == VR_CLI_ONE_SCENE) && count == 0) {
            vr_cli_help(stderr, cmd, opts);
            rc = vr_cli_fail(VR_CLI_USAGE, cmd->name, "no scene given");
        } else if ((cmd->kind == VR_CLI_SCENE_OR_DEFAULT || cmd->kind == VR_CLI_ONE_SCENE) &&
                   count > 1) {
            rc = vr_cli_fail(VR_CLI_USAGE, cmd->name, "one scene at a time ('%s' and '%s')", v[0],
                             v[1]);
        } else if (cmd->kind != VR_CLI_OPERANDS_OWN && count == 0) {
            v = default_scene;
            count = 1;
        }
        for (int i = 0; rc == VR_CLI_CONTINUE && cmd->kind != VR_CLI_OPERANDS_OWN && i < count;
             ++i)
            vr_cli_input(v[i]);
        if (args) {
            args->v = v;
            args->count = count;
        }
    }
    free(lo);
    free(shorts);
    return rc;
}

/* ---- numbers ------------------------------------------------------------------------------ */

/* A whole number: decimal digits with an optional k (x1000) or M (x1000000) suffix. */
static int whole_number(const char *s, uint64_t *out)
{
    if (!*s || *s < '0' || *s > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    uint64_t scale = 1;
    if (*end == 'k' || *end == 'K')
        scale = 1000, ++end;
    else if (*end == 'M')
        scale = 1000000, ++end;
    if (*end || (v && scale > UINT64_MAX / v))
        return -1;
    *out = v * scale;
    return 0;
}

static vr_status range_error(const vr_cli_opt *o, const char *kind)
{
    if (o->multiple > 1)
        return vr_set_error(VR_ERR_ARG, "want a %s that is a multiple of %u in %.0f..%.0f", kind,
                            o->multiple, o->lo, o->hi);
    return vr_set_error(VR_ERR_ARG, "want a %s in %.0f..%.0f", kind, o->lo, o->hi);
}

static vr_status check_whole(const vr_cli_opt *o, const char *v, uint64_t *x)
{
    if (whole_number(v, x) != 0 || (double)*x < o->lo || (double)*x > o->hi ||
        (o->multiple > 1 && *x % o->multiple != 0))
        return range_error(o, "whole number");
    return VR_OK;
}

vr_status vr_cli_parse_u32(const vr_cli_opt *o, const char *v)
{
    uint64_t x = 0;
    vr_status s = check_whole(o, v, &x);
    if (s == VR_OK)
        *(uint32_t *)o->dst = (uint32_t)x;
    return s;
}

vr_status vr_cli_parse_u64(const vr_cli_opt *o, const char *v)
{
    uint64_t x = 0;
    vr_status s = check_whole(o, v, &x);
    if (s == VR_OK)
        *(uint64_t *)o->dst = x;
    return s;
}

vr_status vr_cli_parse_int(const vr_cli_opt *o, const char *v)
{
    uint64_t x = 0;
    vr_status s = check_whole(o, v, &x);
    if (s == VR_OK)
        *(int *)o->dst = (int)x;
    return s;
}

vr_status vr_cli_parse_float(const vr_cli_opt *o, const char *v)
{
    char *end = NULL;
    errno = 0;
    const double x = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(x) || x < o->lo || x > o->hi)
        return vr_set_error(VR_ERR_ARG, "want a number in %g..%g", o->lo, o->hi);
    *(float *)o->dst = (float)x;
    return VR_OK;
}

vr_status vr_cli_parse_string(const vr_cli_opt *o, const char *v)
{
    if (!*v)
        return vr_set_error(VR_ERR_ARG, "want a non-empty value");
    *(const char **)o->dst = v;
    return VR_OK;
}

vr_status vr_cli_parse_path(const vr_cli_opt *o, const char *v)
{
    if (!*v)
        return vr_set_error(VR_ERR_ARG, "want a file name");
    if (strlen(v) >= 4096)
        return vr_set_error(VR_ERR_ARG, "the path has %zu bytes; at most 4095", strlen(v));
    *(const char **)o->dst = v;
    return VR_OK;
}

static int choice_index(const char *const *choices, const char *v)
{
    for (int i = 0; choices[i]; ++i)
        if (!strcmp(choices[i], v))
            return i;
    return -1;
}

static void choice_list(char *buf, size_t n, const char *const *choices)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; choices[i] && len + 2 < n; ++i)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", choices[i]);
}

vr_status vr_cli_parse_choice(const vr_cli_opt *o, const char *v)
{
    const int k = choice_index(o->choices, v);
    if (k < 0) {
        char list[256];
        choice_list(list, sizeof list, o->choices);
        return vr_set_error(VR_ERR_ARG, "want one of %s", list);
    }
    *(int *)o->dst = k;
    return VR_OK;
}

vr_status vr_cli_parse_size(const vr_cli_opt *o, const char *v)
{
    uint32_t *wh = (uint32_t *)o->dst;
    const char *x = strpbrk(v, "xX");
    char w[32];
    uint64_t a, b;
    if (!x || (size_t)(x - v) >= sizeof w)
        return vr_set_error(VR_ERR_ARG, "want WxH, e.g. 1280x720, each 1..%.0f", o->hi);
    memcpy(w, v, (size_t)(x - v));
    w[x - v] = '\0';
    if (whole_number(w, &a) || whole_number(x + 1, &b) || a < 1 || b < 1 || a > o->hi ||
        b > o->hi)
        return vr_set_error(VR_ERR_ARG, "want WxH, e.g. 1280x720, each 1..%.0f", o->hi);
    wh[0] = (uint32_t)a;
    wh[1] = (uint32_t)b;
    return VR_OK;
}

const char *const vr_cli_restart_names[] = {"r", "deg", NULL};

/* ---- lists -------------------------------------------------------------------------------- */

int vr_cli_split(const char *s, char *items, size_t size, int max)
{
    int n = 0;
    for (const char *p = s;;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0) {
            vr_set_error(VR_ERR_ARG, "empty item in the list");
            return -1;
        }
        if (len >= size) {
            vr_set_error(VR_ERR_ARG, "'%.*s' is too long", (int)len, p);
            return -1;
        }
        if (n == max) {
            vr_set_error(VR_ERR_ARG, "more than %d items", max);
            return -1;
        }
        memcpy(items + (size_t)n * size, p, len);
        items[(size_t)n * size + len] = '\0';
        ++n;
        if (!comma)
            return n;
        p = comma + 1;
    }
}

#define ITEM 48 /* longest list item */

/* How one kind of list reads its items: convert() turns an item into a key (the value itself, or
 * an index) and rejects it with a message; a kind with all() accepts "all" alone for every key;
 * store() writes the n keys (and items as typed) into o->dst. */
typedef struct list_kind {
    const char *noun;
    vr_status (*convert)(const vr_cli_opt *o, const char *item, int64_t *key);
    int (*all)(const vr_cli_opt *o, int64_t *keys);
    void (*store)(const vr_cli_opt *o, const int64_t *keys, char items[][ITEM], int n);
} list_kind;

/* Splits `v`, converts each item, refuses repeats, stores the list. */
static vr_status parse_list(const vr_cli_opt *o, const char *v, const list_kind *kind)
{
    int64_t keys[VR_CLI_MAX_LIST];
    char items[VR_CLI_MAX_LIST][ITEM];
    int n = vr_cli_split(v, &items[0][0], ITEM, VR_CLI_MAX_LIST);
    if (n < 0)
        return VR_ERR_ARG;
    if (kind->all && !strcmp(items[0], "all") && n == 1) {
        n = kind->all(o, keys);
        for (int i = 0; i < n; ++i)
            items[i][0] = '\0';
    } else {
        for (int i = 0; i < n; ++i) {
            if (kind->all && !strcmp(items[i], "all"))
                return vr_set_error(VR_ERR_ARG, "'all' stands alone");
            if (kind->convert(o, items[i], &keys[i]) != VR_OK)
                return VR_ERR_ARG;
            for (int k = 0; k < i; ++k)
                if (keys[k] == keys[i])
                    return strcmp(items[k], items[i])
                               ? vr_set_error(VR_ERR_ARG, "%s '%s' is the same as '%s'",
                                              kind->noun, items[i], items[k])
                               : vr_set_error(VR_ERR_ARG, "%s '%s' is listed twice", kind->noun,
                                              items[i]);
        }
    }
    kind->store(o, keys, items, n);
    return VR_OK;
}

/* Lists of small integers (orders, choices) and of registry rows. */
_Static_assert(sizeof(vr_cli_orders) == sizeof(vr_cli_choices) &&
                   offsetof(vr_cli_orders, count) == offsetof(vr_cli_choices, count),
               "store_ints writes both");
static void store_ints(const vr_cli_opt *o, const int64_t *keys, char items[][ITEM], int n)
{
    (void)items;
    /* vr_cli_orders and vr_cli_choices share the layout {int v[VR_CLI_MAX_LIST]; int count;} */
    vr_cli_orders *dst = (vr_cli_orders *)o->dst;
    for (int i = 0; i < n; ++i)
        dst->v[i] = (int)keys[i];
    dst->count = n;
}

static vr_status order_key(const vr_cli_opt *o, const char *item, int64_t *key)
{
    (void)o;
    *key = vr_order_parse(item);
    if (*key < 0)
        return vr_set_error(VR_ERR_ARG, "unknown order '%s' (file, forsyth, tipsify, random, "
                            "each optionally +fetch)", item);
    return VR_OK;
}

vr_status vr_cli_parse_orders(const vr_cli_opt *o, const char *v)
{
    static const list_kind kind = {"order", order_key, NULL, store_ints};
    return parse_list(o, v, &kind);
}

static vr_status strategy_key(const vr_cli_opt *o, const char *item, int64_t *key)
{
    (void)o;
    const vr_reuse_ops *ops = vr_reuse_find(item);
    if (!ops)
        return vr_set_error(VR_ERR_ARG, "unknown strategy '%s' (naive, warp, hash, phash, sort, "
                            "multi, patch, meshlet, all)", item);
    *key = ops - vr_reuse_all;
    return VR_OK;
}

static int every_strategy(const vr_cli_opt *o, int64_t *keys)
{
    (void)o;
    for (int k = 0; k < VR_REUSE_KIND_COUNT; ++k)
        keys[k] = k;
    return VR_REUSE_KIND_COUNT;
}

static void store_strategies(const vr_cli_opt *o, const int64_t *keys, char items[][ITEM], int n)
{
    (void)items;
    vr_cli_strategies *dst = (vr_cli_strategies *)o->dst;
    for (int i = 0; i < n; ++i)
        dst->v[i] = &vr_reuse_all[keys[i]];
    dst->count = n;
}

vr_status vr_cli_parse_strategies(const vr_cli_opt *o, const char *v)
{
    static const list_kind kind = {"strategy", strategy_key, every_strategy, store_strategies};
    return parse_list(o, v, &kind);
}

/* A load's key is its step count: "light" and "1200" are the same load. */
static vr_status load_key(const vr_cli_opt *o, const char *item, int64_t *key)
{
    (void)o;
    uint32_t it = 0;
    if (vr_load_parse(item, &it) != VR_OK)
        return VR_ERR_ARG; /* its message names the load and what is accepted */
    if (strlen(item) >= sizeof ((vr_cli_loads *)0)->name[0])
        return vr_set_error(VR_ERR_ARG, "load '%s' is too long a name", item);
    *key = it;
    return VR_OK;
}

static void store_loads(const vr_cli_opt *o, const int64_t *keys, char items[][ITEM], int n)
{
    vr_cli_loads *dst = (vr_cli_loads *)o->dst;
    for (int i = 0; i < n; ++i) {
        dst->v[i] = (uint32_t)keys[i];
        snprintf(dst->name[i], sizeof dst->name[i], "%.23s", items[i]); /* load_key: fits */
    }
    dst->count = n;
}

vr_status vr_cli_parse_loads(const vr_cli_opt *o, const char *v)
{
    static const list_kind kind = {"load", load_key, NULL, store_loads};
    return parse_list(o, v, &kind);
}

static vr_status u32_key(const vr_cli_opt *o, const char *item, int64_t *key)
{
    uint64_t x = 0;
    if (check_whole(o, item, &x) != VR_OK)
        return vr_set_error(VR_ERR_ARG, "'%s': %s", item, vr_last_error());
    *key = (int64_t)x;
    return VR_OK;
}

static void store_u32s(const vr_cli_opt *o, const int64_t *keys, char items[][ITEM], int n)
{
    (void)items;
    vr_cli_u32s *dst = (vr_cli_u32s *)o->dst;
    for (int i = 0; i < n; ++i)
        dst->v[i] = (uint32_t)keys[i];
    dst->count = n;
}

vr_status vr_cli_parse_u32s(const vr_cli_opt *o, const char *v)
{
    static const list_kind kind = {"value", u32_key, NULL, store_u32s};
    return parse_list(o, v, &kind);
}

static vr_status choice_key(const vr_cli_opt *o, const char *item, int64_t *key)
{
    *key = choice_index(o->choices, item);
    if (*key < 0) {
        char list[256];
        choice_list(list, sizeof list, o->choices);
        return vr_set_error(VR_ERR_ARG, "unknown '%s' (%s, all)", item, list);
    }
    return VR_OK;
}

static int every_choice(const vr_cli_opt *o, int64_t *keys)
{
    int k = 0;
    for (; o->choices[k] && k < VR_CLI_MAX_LIST; ++k)
        keys[k] = k;
    return k;
}

vr_status vr_cli_parse_choices(const vr_cli_opt *o, const char *v)
{
    static const list_kind kind = {"choice", choice_key, every_choice, store_ints};
    return parse_list(o, v, &kind);
}
