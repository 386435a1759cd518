/* cli_out.c - output files written safely (cli.h): a temporary file in the destination's folder,
 * renamed over the destination once every write succeeded; never a write over one of the
 * command's inputs or over an earlier output of the same run; never a removal of anything the
 * program did not create. */
#define _GNU_SOURCE /* mkostemp, realpath */
#include "pipeline/cli/cli.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILES 256

typedef struct file_id {
    dev_t dev;
    ino_t ino;
    char *name; /* as the user gave it */
} file_id;

static file_id g_inputs[MAX_FILES];
static int g_input_count;
static char *g_outputs[MAX_FILES]; /* canonical destinations written in this run */
static int g_output_count;
static int g_stdout_taken;
/* temporaries not yet renamed or removed: gone at exit, so an interrupted run leaves none */
static char *g_temps[MAX_FILES];
static int g_temp_count;

static void remove_temps(void)
{
    for (int i = 0; i < g_temp_count; ++i)
        if (g_temps[i])
            unlink(g_temps[i]); /* async-signal-safe: also called from on_signal */
}

/* Ctrl-C, `timeout` or a closed terminal: the temporaries go, the destinations stay as they were,
 * then the signal does what it would have done. */
static void on_signal(int sig)
{
    remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track_temp(char *temp)
{
    static int registered;
    if (!registered) {
        atexit(remove_temps);
        const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
            struct sigaction old;
            /* keep a handler the program installed itself (or an ignored signal) */
            if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
                signal(sigs[i], on_signal);
        }
        registered = 1;
    }
    for (int i = 0; i < g_temp_count; ++i)
        if (!g_temps[i]) {
            g_temps[i] = temp;
            return;
        }
    if (g_temp_count < MAX_FILES)
        g_temps[g_temp_count++] = temp;
}

static void untrack_temp(const char *temp)
{
    for (int i = 0; i < g_temp_count; ++i)
        if (g_temps[i] == temp)
            g_temps[i] = NULL;
}

void vr_cli_input(const char *path)
{
    struct stat st;
    if (!path || g_input_count == MAX_FILES)
        return;
    if (stat(path, &st) != 0) {
        /* "bunny.obj@7M": the file before the subdivision suffix */
        const char *at = strrchr(path, '@');
        char buf[PATH_MAX];
        if (!at || (size_t)(at - path) >= sizeof buf)
            return;
        memcpy(buf, path, (size_t)(at - path));
        buf[at - path] = '\0';
        if (stat(buf, &st) != 0)
            return;
    }
    g_inputs[g_input_count].dev = st.st_dev;
    g_inputs[g_input_count].ino = st.st_ino;
    g_inputs[g_input_count].name = strdup(path);
    ++g_input_count;
}

int vr_cli_label_shared(const char *spec)
{
    const char *label = vr_cli_scene_label(spec);
    for (int i = 0; i < g_input_count; ++i)
        if (strcmp(g_inputs[i].name, spec) && !strcmp(vr_cli_scene_label(g_inputs[i].name), label))
            return 1;
    return 0;
}

/* The destination with links resolved and its folder made absolute, so two names of one file
 * compare equal even before it exists. malloc'd, or NULL with a message. */
static char *canonical(const char *path, const char *what)
{
    char resolved[PATH_MAX];
    if (realpath(path, resolved))
        return strdup(resolved);
    if (errno != ENOENT)
        return vr_set_error(VR_ERR_IO, "%s '%s': %s", what, path, strerror(errno)), NULL;
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        vr_set_error(VR_ERR_ARG, "%s '%s' is a symbolic link to a missing file; name the file "
                     "itself", what, path);
        return NULL;
    }
    char *copy = strdup(path), *copy2 = strdup(path);
    char *result = NULL;
    if (copy && copy2) {
        const char *dir = dirname(copy), *base = basename(copy2);
        if (!realpath(dir, resolved))
            vr_set_error(VR_ERR_IO, "%s '%s': folder '%s': %s", what, path, dir, strerror(errno));
        else if (strlen(resolved) + strlen(base) + 2 > PATH_MAX)
            vr_set_error(VR_ERR_ARG, "%s '%s': the path is too long", what, path);
        else if ((result = malloc(strlen(resolved) + strlen(base) + 2)) != NULL) {
            strcpy(result, resolved);
            if (strcmp(resolved, "/"))
                strcat(result, "/");
            strcat(result, base);
        }
    }
    free(copy);
    free(copy2);
    return result;
}

/* The rules every output obeys; *direct = 1 when the destination is no regular file. */
static vr_status check_destination(const char *path, const char *what, const char *target,
                                   int *direct)
{
    struct stat st;
    *direct = 0;
    if (stat(target, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return vr_set_error(VR_ERR_ARG, "%s '%s' is a folder; name a file in it", what, path);
        if (!S_ISREG(st.st_mode)) {
            *direct = 1; /* /dev/null, a pipe, a terminal: written as they are */
            return VR_OK;
        }
        for (int i = 0; i < g_input_count; ++i)
            if (g_inputs[i].dev == st.st_dev && g_inputs[i].ino == st.st_ino)
                return vr_set_error(VR_ERR_ARG,
                                    "%s '%s' is the input '%s'; writing it would destroy the "
                                    "input: choose another file", what, path, g_inputs[i].name);
        /* the rename would replace a file its owner made read-only; fopen would have refused */
        if (access(target, W_OK) != 0)
            return vr_set_error(VR_ERR_IO, "%s '%s' cannot be written: %s", what, path,
                                strerror(errno));
    }
    for (int i = 0; i < g_output_count; ++i)
        if (!strcmp(g_outputs[i], target))
            return vr_set_error(VR_ERR_ARG,
                                "%s '%s' was already written by this run (two outputs with one "
                                "name); choose distinct files", what, path);
    return VR_OK;
}

static void remember_output(char *target)
{
    if (g_output_count < MAX_FILES)
        g_outputs[g_output_count++] = target;
    else
        free(target);
}

static void discard(char *temp)
{
    if (temp) {
        unlink(temp);
        untrack_temp(temp);
        free(temp);
    }
}

static vr_status reserve(const char *path, const char *what, char **temp, char **target)
{
    *temp = *target = NULL;
    char *t = canonical(path, what);
    if (!t)
        return VR_ERR_ARG;
    int direct;
    vr_status s = check_destination(path, what, t, &direct);
    if (s != VR_OK) {
        free(t);
        return s;
    }
    remember_output(strdup(t)); /* from now on: a second output of this run may not use it */
    if (direct) {
        *target = t;
        return VR_OK;
    }
    /* ".name.vreuse-XXXXXX" beside the destination: same file system, so rename is atomic */
    char *copy = strdup(t), *copy2 = strdup(t);
    char *tmp = copy && copy2 ? malloc(strlen(t) + 32) : NULL;
    if (!tmp) {
        free(copy);
        free(copy2);
        free(t);
        return vr_set_error(VR_ERR_OOM, "%s '%s': out of memory", what, path);
    }
    sprintf(tmp, "%s/.%s.vreuse-XXXXXX", dirname(copy), basename(copy2));
    free(copy);
    free(copy2);
    const int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        free(tmp);
        free(t);
        return vr_set_error(VR_ERR_IO, "%s '%s': cannot create a file in its folder: %s", what,
                            path, strerror(e));
    }
    /* mkostemp makes 0600; an existing destination keeps its mode, a new one gets the umask's */
    struct stat st;
    mode_t mode;
    if (stat(t, &st) == 0) {
        mode = st.st_mode & 07777;
    } else {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    fchmod(fd, mode);
    close(fd);
    track_temp(tmp);
    *temp = tmp;
    *target = t;
    return VR_OK;
}

static vr_status commit(const char *temp, const char *target, const char *path)
{
    if (temp && rename(temp, target) != 0) {
        const int e = errno;
        unlink(temp);
        untrack_temp(temp);
        return vr_set_error(VR_ERR_IO, "'%s': could not move the finished file into place: %s",
                            path, strerror(e));
    }
    if (temp)
        untrack_temp(temp);
    return VR_OK;
}

vr_status vr_cli_out_check(const char *path, const char *what)
{
    if (!strcmp(path, "-"))
        return g_stdout_taken ? vr_set_error(VR_ERR_ARG, "%s to standard output: another output "
                                             "already goes there; name a file", what)
                              : VR_OK;
    char *t = canonical(path, what);
    if (!t)
        return VR_ERR_ARG;
    int direct;
    vr_status s = check_destination(path, what, t, &direct);
    if (s == VR_OK && !direct) {
        char *copy = strdup(t);
        if (copy && access(dirname(copy), W_OK) != 0)
            s = vr_set_error(VR_ERR_IO, "%s '%s': cannot write into its folder: %s", what, path,
                             strerror(errno));
        free(copy);
    }
    free(t);
    return s;
}

vr_status vr_cli_out_open(vr_cli_out *o, const char *path, const char *what)
{
    memset(o, 0, sizeof *o);
    if (!strcmp(path, "-")) {
        if (g_stdout_taken)
            return vr_set_error(VR_ERR_ARG, "%s to standard output: another output already "
                                "goes there; name a file", what);
        g_stdout_taken = 1;
        o->f = stdout;
        o->is_stdout = 1;
        o->path = strdup("-");
        return VR_OK;
    }
    vr_status s = reserve(path, what, &o->temp, &o->target);
    if (s != VR_OK)
        return s;
    o->path = strdup(path);
    const char *file = o->temp ? o->temp : o->target;
    o->f = fopen(file, "wb");
    if (!o->f) {
        const int e = errno;
        discard(o->temp);
        free(o->target);
        free(o->path);
        memset(o, 0, sizeof *o);
        return vr_set_error(VR_ERR_IO, "cannot write %s '%s': %s", what, path, strerror(e));
    }
    return VR_OK;
}

vr_status vr_cli_out_close(vr_cli_out *o)
{
    if (!o->f)
        return VR_OK;
    vr_status s = VR_OK;
    int e = 0;
    if (o->is_stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            s = vr_set_error(VR_ERR_IO, "writing to standard output failed: %s",
                             strerror(errno ? errno : EIO));
    } else {
        const int bad = ferror(o->f);
        if (fclose(o->f) != 0 || bad) {
            e = errno ? errno : EIO;
            s = vr_set_error(VR_ERR_IO, "writing '%s' failed: %s; the file was left as it was",
                             o->path, strerror(e));
            discard(o->temp);
            o->temp = NULL;
        } else {
            s = commit(o->temp, o->target, o->path);
            if (o->temp) {
                free(o->temp);
                o->temp = NULL;
            } else {
                /* written directly: commit only remembered the destination */
            }
        }
    }
    free(o->target);
    free(o->path);
    memset(o, 0, sizeof *o);
    return s;
}

void vr_cli_out_abort(vr_cli_out *o)
{
    if (!o->f)
        return;
    if (!o->is_stdout)
        fclose(o->f);
    discard(o->temp);
    free(o->target);
    free(o->path);
    memset(o, 0, sizeof *o);
}

/* The writer's message names the file it was given, the temporary; the user named `path`. Each
 * mention of the temporary becomes `path`, so no message shows a name the user never saw. */
static void name_destination(vr_status s, const char *temp, const char *path)
{
    const char *msg = vr_last_error(), *hit = strstr(msg, temp);
    if (!hit)
        return;
    char where[128], text[1024];
    snprintf(where, sizeof where, "%s", vr_last_error_where());
    size_t len = 0;
    for (const char *p = msg; *p && len + 1 < sizeof text;) {
        if (p == hit) {
            len += (size_t)snprintf(text + len, sizeof text - len, "%s", path);
            p += strlen(temp);
            hit = strstr(p, temp);
        } else {
            text[len++] = *p++;
        }
    }
    text[len < sizeof text ? len : sizeof text - 1] = '\0';
    vr_set_error_at(s, *where ? where : NULL, "%s", text);
}

vr_status vr_cli_write_via(const char *path, const char *what, vr_cli_path_writer fn, void *ctx)
{
    char *temp = NULL, *target = NULL;
    vr_status s = reserve(path, what, &temp, &target);
    if (s != VR_OK)
        return s;
    s = fn(temp ? temp : target, ctx);
    if (s == VR_OK)
        s = commit(temp, target, path);
    else if (temp) {
        name_destination(s, temp, path);
        unlink(temp);
        untrack_temp(temp);
    }
    free(temp);
    free(target);
    return s;
}
