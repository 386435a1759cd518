/* isolate.c - a scene built in a forked child process and copied back (vr_scene_in_child), so
 * that whatever the code in the child does - crash, abort, allocate without bound, hang - ends
 * as a message in the parent, never the process. load_assimp.c runs every assimp import this
 * way: files make assimp corrupt its own heap (a 36 KB FBX makes it free a block twice), which no
 * pre-check can foresee. Try: `vreuse_tests scenes/assimp-crash`, `vreuse info model.fbx`.
 * Protocol: one pipe, the same binary on both ends, so structs travel as they are: a head (fn's
 * status and message, repairs, the caller's result, the draw count), per draw a header and its
 * arrays, an end marker; the child _exits. The parent believes no count before checking it. A
 * second pipe collects what the child prints (glibc's "double free detected" among it); a page
 * shared with the child keeps what must survive its death: that an allocation failed, its limit.
 */
#define _GNU_SOURCE /* pipe2, F_SETPIPE_SZ */
#include "scenes/scene_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* AddressSanitizer reserves terabytes of address space: no address-space limit under it, and
 * the child's reports go to the real stderr (sanitizer runs must see them). */
#if defined(__SANITIZE_ADDRESS__)
#define VR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VR_ASAN 1
#endif
#endif
#ifndef VR_ASAN
#define VR_ASAN 0
#endif

#define MIB ((uint64_t)1 << 20)
#define WIRE_HEAD 0x31485256u /* "VRH1" */
#define WIRE_DRAW 0x31445256u /* "VRD1" */
#define WIRE_END 0x31455256u  /* "VRE1" */
#define WIRE_NORMALS 1u
#define WIRE_TEXCOORDS 2u
#define OUTPUT_TAIL 1024      /* bytes of the child's output kept for a crash message */
#define PIPE_BYTES (1 << 20)  /* pipe buffer asked for: fewer wake-ups for large meshes */

typedef struct wire_head {
    uint32_t magic;        /* WIRE_HEAD */
    int32_t status;        /* fn's vr_status */
    uint32_t draw_count;   /* draws that follow (0 unless status is VR_OK) */
    uint32_t result_bytes; /* bytes of the caller's result after this head */
    uint64_t repaired;
    char repair_note[256];
    char message[1024], where[128]; /* fn's error */
} wire_head;

typedef struct wire_draw {
    uint32_t magic;        /* WIRE_DRAW */
    uint32_t vertex_count, index_count;
    uint32_t arrays;       /* WIRE_NORMALS | WIRE_TEXCOORDS: the optional arrays that follow */
    float transform[16];
    char name[64];
} wire_draw; /* then positions, normals, texcoords (as flagged) and indices */

/* Written by the child, read by the parent once the child has ended, however it ended. */
typedef struct child_shared {
    volatile int new_failed;   /* an operator new failed (vr_watch_failed_new) */
    volatile int limited;      /* the child ran under an address-space limit of ... */
    volatile uint64_t limit_mib; /* ... this many MiB more than it had at the fork */
    volatile int inherited;    /* ... which was the process's own, tighter than ours */
} child_shared;

/* ---- the child --------------------------------------------------------------------------- */

static int write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n) {
        const ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The address-space limit: what the child had at the fork (the parent's memory, a CUDA
 * context's reservations) plus the budget, or a tighter limit the process already had (ulimit -v,
 * prlimit). Without /proc there is no size to add to: no limit, the time bound stays. */
static void limit_memory(child_shared *sh, uint64_t budget_mib)
{
    if (VR_ASAN || budget_mib == 0)
        return;
    char buf[64];
    const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    const ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    buf[n] = 0;
    const uint64_t have = strtoull(buf, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE);
    const uint64_t budget = budget_mib > UINT64_MAX / 2 / MIB ? UINT64_MAX / 2 : budget_mib * MIB;
    const uint64_t want = have + budget;
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0)
        return;
    if (r.rlim_cur != RLIM_INFINITY && (uint64_t)r.rlim_cur <= want) {
        sh->limit_mib = (uint64_t)r.rlim_cur > have ? ((uint64_t)r.rlim_cur - have) / MIB : 0;
        sh->inherited = sh->limited = 1;
        return;
    }
    r.rlim_cur = (rlim_t)want; /* the hard limit stays: lowering the soft one always works */
    if (setrlimit(RLIMIT_AS, &r) == 0) {
        sh->limit_mib = budget_mib;
        sh->limited = 1;
    }
}

static int send_scene(int fd, const vr_scene *s, vr_status st, const void *result,
                      size_t result_bytes)
{
    wire_head h;
    memset(&h, 0, sizeof h);
    h.magic = WIRE_HEAD;
    h.status = (int32_t)st;
    h.draw_count = st ? 0 : s->draw_count;
    h.result_bytes = (uint32_t)result_bytes;
    h.repaired = s->repaired;
    snprintf(h.repair_note, sizeof h.repair_note, "%s", s->repair_note);
    if (st) {
        snprintf(h.message, sizeof h.message, "%s", vr_last_error());
        snprintf(h.where, sizeof h.where, "%s", vr_last_error_where());
    }
    if (write_all(fd, &h, sizeof h) || write_all(fd, result, result_bytes))
        return -1;
    for (uint32_t i = 0; i < h.draw_count; ++i) {
        const vr_draw *d = &s->draws[i];
        const vr_mesh *m = &d->mesh;
        wire_draw w;
        memset(&w, 0, sizeof w);
        w.magic = WIRE_DRAW;
        w.vertex_count = m->vertex_count;
        w.index_count = m->index_count;
        w.arrays = (m->normals ? WIRE_NORMALS : 0) | (m->texcoords ? WIRE_TEXCOORDS : 0);
        memcpy(w.transform, d->transform, sizeof w.transform);
        memcpy(w.name, d->name, sizeof w.name);
        const size_t vc = m->vertex_count;
        if (write_all(fd, &w, sizeof w) || write_all(fd, m->positions, vc * 3 * sizeof(float)) ||
            (m->normals && write_all(fd, m->normals, vc * 3 * sizeof(float))) ||
            (m->texcoords && write_all(fd, m->texcoords, vc * 2 * sizeof(float))) ||
            write_all(fd, m->indices, (size_t)m->index_count * sizeof(uint32_t)))
            return -1;
    }
    const uint32_t end = WIRE_END;
    return write_all(fd, &end, sizeof end);
}

/* Safety of running code after fork() in a process that may have other threads (OpenMP workers,
 * the render progress thread, CUDA's driver threads): only the forking thread exists in the
 * child, and any lock another thread held at the fork stays held there forever. The child
 * therefore touches only (1) glibc, whose fork re-initializes the malloc arenas' locks, stdio's
 * and the dynamic loader's in the child; (2) assimp and libstdc++, which no other thread holds
 * locks of: the parent process never calls assimp (every import runs in a child, one at a time
 * under load_assimp.c's lock), and no thread of vreuse throws C++ exceptions; (3) our plain C
 * (the node walk, the mesh checks). It never calls CUDA (a context does not survive a fork)
 * or OpenMP, never returns into the caller and ends with _exit: no atexit handlers (the command
 * line's temp-file cleanup), no second flush of stdio buffers (the parent flushed all before the
 * fork, and the child's stdout and stderr go to the output pipe). Should a lock still be held
 * (a case this reasoning missed), the child hangs and the parent's time bound kills it. */
static void child_main(int data_fd, int out_fd, child_shared *sh, pid_t parent,
                       const vr_child_limits *limits, vr_child_fn fn, void *arg, void *result,
                       size_t result_bytes)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the forking thread waits for us: its end is the parent's */
#endif
    if (getppid() != parent)
        _exit(127);
    /* handlers the parent installed are its own (cli_out.c removes temporaries on SIGINT); a
     * crash must end the child as the signal it is. Ignored signals stay ignored. */
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGABRT, SIGSEGV, SIGBUS,
                        SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
        struct sigaction old;
        if (VR_ASAN && i >= 5)
            break; /* the sanitizer's own crash handlers report the fault */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            signal(sigs[i], SIG_DFL);
    }
    if (!VR_ASAN) {
        dup2(out_fd, STDOUT_FILENO);
        dup2(out_fd, STDERR_FILENO);
    }
    close(out_fd);
    limit_memory(sh, limits->memory_mib);
    vr_watch_failed_new(&sh->new_failed);
    vr_scene scene;
    memset(&scene, 0, sizeof scene);
    const vr_status st = fn(&scene, result, arg);
    /* nothing is freed: the process ends here */
    _exit(send_scene(data_fd, &scene, st, result, result_bytes) ? 1 : 0);
}

/* ---- the parent -------------------------------------------------------------------------- */

typedef struct reader {
    int data_fd, out_fd;  /* non-blocking read ends; out_fd -1 after its end */
    double deadline_ms;   /* vr_now_ms() bound, 0: none */
    int ended, timed_out; /* the data pipe closed (or failed) / the deadline passed */
    char tail[OUTPUT_TAIL];
    size_t tail_len;      /* the last bytes the child printed */
} reader;

static void drain_output(reader *r)
{
    char buf[4096];
    while (r->out_fd >= 0) {
        const ssize_t k = read(r->out_fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return; /* EAGAIN: nothing more for now */
        if (k == 0) {
            close(r->out_fd);
            r->out_fd = -1;
            return;
        }
        const size_t n = (size_t)k > OUTPUT_TAIL ? OUTPUT_TAIL : (size_t)k;
        const char *src = buf + (size_t)k - n;
        if (r->tail_len + n > OUTPUT_TAIL) {
            const size_t drop = r->tail_len + n - OUTPUT_TAIL;
            memmove(r->tail, r->tail + drop, r->tail_len - drop);
            r->tail_len -= drop;
        }
        memcpy(r->tail + r->tail_len, src, n);
        r->tail_len += n;
    }
}

/* Blocks until either pipe has something (or closed); -1 at the deadline. */
static int wait_pipes(reader *r)
{
    for (;;) {
        int timeout = -1;
        if (r->deadline_ms > 0) {
            const double left = r->deadline_ms - vr_now_ms();
            if (left <= 0) {
                r->timed_out = 1;
                return -1;
            }
            timeout = left > 1e9 ? 1000000000 : (int)left + 1;
        }
        struct pollfd p[2] = {{r->data_fd, POLLIN, 0}, {r->out_fd, POLLIN, 0}};
        const int n = poll(p, r->out_fd >= 0 ? 2 : 1, timeout);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR) {
            r->ended = 1;
            return -1;
        }
    }
}

/* Exactly n bytes of the stream: 0, or -1 when it ended, failed or ran past the deadline. */
static int read_exact(reader *r, void *dst, size_t n)
{
    char *p = dst;
    while (n) {
        const ssize_t k = read(r->data_fd, p, n);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            r->ended = 1;
            return -1;
        }
        drain_output(r);
        if (wait_pipes(r))
            return -1;
    }
    return 0;
}

/* What the stream turned out to be. */
typedef enum { RECV_OK, RECV_BROKEN, RECV_BAD, RECV_OOM } recv_state;

static int finite16(const float *m)
{
    for (int i = 0; i < 16; ++i)
        if (!isfinite(m[i]))
            return 0;
    return 1;
}

/* One draw's header and arrays into out->draws[out->draw_count]; *bad names what is wrong. */
static recv_state receive_draw(reader *r, vr_scene *out, uint32_t *capacity, uint64_t *indices,
                               uint64_t *bytes, uint64_t max_bytes, const char **bad)
{
    wire_draw w;
    if (read_exact(r, &w, sizeof w))
        return RECV_BROKEN;
    const uint64_t per_vertex = 12 + (w.arrays & WIRE_NORMALS ? 12 : 0) +
                                (w.arrays & WIRE_TEXCOORDS ? 8 : 0);
    const uint64_t size = per_vertex * w.vertex_count + 4ull * w.index_count;
    *indices += w.index_count;
    *bytes += size;
    if (w.magic != WIRE_DRAW || (w.arrays & ~(WIRE_NORMALS | WIRE_TEXCOORDS)))
        return *bad = "a draw header out of place", RECV_BAD;
    if (w.vertex_count == 0 || w.index_count == 0 || w.index_count % 3 ||
        !(w.arrays & WIRE_NORMALS))
        return *bad = "a draw without vertices, triangles or normals", RECV_BAD;
    if (*indices > UINT32_MAX)
        return *bad = "more than 2^32-1 indices", RECV_BAD;
    if (max_bytes && *bytes > max_bytes)
        return *bad = "more vertex data than its memory limit could hold", RECV_BAD;
    if (!finite16(w.transform))
        return *bad = "a transform that is not finite", RECV_BAD;
    if (out->draw_count == *capacity) {
        const uint32_t cap = *capacity ? *capacity * 2 : 8;
        vr_draw *d = realloc(out->draws, (size_t)cap * sizeof *d);
        if (!d)
            return RECV_OOM;
        out->draws = d;
        *capacity = cap;
    }
    vr_draw *d = &out->draws[out->draw_count];
    memset(d, 0, sizeof *d);
    memcpy(d->name, w.name, sizeof d->name);
    d->name[sizeof d->name - 1] = 0;
    memcpy(d->transform, w.transform, sizeof d->transform);
    vr_mesh *m = &d->mesh;
    const size_t vc = w.vertex_count;
    m->vertex_count = w.vertex_count;
    m->index_count = w.index_count;
    m->positions = malloc(vc * 3 * sizeof(float));
    m->normals = malloc(vc * 3 * sizeof(float));
    m->texcoords = w.arrays & WIRE_TEXCOORDS ? malloc(vc * 2 * sizeof(float)) : NULL;
    m->indices = malloc((size_t)w.index_count * sizeof(uint32_t));
    recv_state st = RECV_OK;
    if (!m->positions || !m->normals || !m->indices || (w.arrays & WIRE_TEXCOORDS && !m->texcoords))
        st = RECV_OOM;
    else if (read_exact(r, m->positions, vc * 3 * sizeof(float)) ||
             read_exact(r, m->normals, vc * 3 * sizeof(float)) ||
             (m->texcoords && read_exact(r, m->texcoords, vc * 2 * sizeof(float))) ||
             read_exact(r, m->indices, (size_t)w.index_count * sizeof(uint32_t)))
        st = RECV_BROKEN;
    for (uint32_t i = 0; st == RECV_OK && i < m->index_count; ++i)
        if (m->indices[i] >= m->vertex_count)
            *bad = "an index past the vertices of its draw", st = RECV_BAD;
    for (size_t i = 0; st == RECV_OK && i < vc * 3; ++i)
        if (!isfinite(m->positions[i]))
            *bad = "a position that is not finite", st = RECV_BAD;
    if (st != RECV_OK) {
        vr_mesh_free(m);
        return st;
    }
    ++out->draw_count;
    return RECV_OK;
}

static recv_state receive(reader *r, vr_scene *out, wire_head *h, void *result,
                          size_t result_bytes, const child_shared *sh, const char **bad)
{
    if (read_exact(r, h, sizeof *h))
        return RECV_BROKEN;
    h->repair_note[sizeof h->repair_note - 1] = 0;
    h->message[sizeof h->message - 1] = 0;
    h->where[sizeof h->where - 1] = 0;
    if (h->magic != WIRE_HEAD || h->result_bytes != result_bytes)
        return *bad = "a malformed head", RECV_BAD;
    if (h->status < VR_OK || h->status > VR_ERR_NO_DEVICE || (h->status && h->draw_count))
        return *bad = "an unknown status", RECV_BAD;
    if (h->draw_count > VR_SCENE_MAX_DRAWS)
        return *bad = "more draws than a scene may have", RECV_BAD;
    if (read_exact(r, result, result_bytes))
        return RECV_BROKEN;
    /* the child held all of it within its limit (set before the head was sent) */
    const uint64_t max_bytes =
        sh->limited && sh->limit_mib < ((uint64_t)1 << 40) ? (sh->limit_mib + 1) * MIB : 0;
    uint32_t capacity = 0;
    uint64_t indices = 0, bytes = 0;
    for (uint32_t i = 0; i < h->draw_count; ++i) {
        const recv_state st = receive_draw(r, out, &capacity, &indices, &bytes, max_bytes, bad);
        if (st != RECV_OK)
            return st;
    }
    uint32_t end = 0;
    if (read_exact(r, &end, sizeof end))
        return RECV_BROKEN;
    if (end != WIRE_END)
        return *bad = "data after its last draw", RECV_BAD;
    out->repaired = h->repaired;
    memcpy(out->repair_note, h->repair_note, sizeof out->repair_note);
    return RECV_OK;
}

/* Reaps the child: unless told to kill it now, waits until it closes its end of the data pipe
 * (it does as it exits) and then for its exit, killing it at the deadline. *killed when it had
 * to be. -1 when it cannot be waited for. */
static int reap(reader *r, pid_t pid, int *wstatus, int kill_now, int *killed)
{
    *killed = kill_now;
    while (!*killed && !r->ended && !r->timed_out) {
        char c;
        const ssize_t k = read(r->data_fd, &c, 1);
        if (k >= 0 || (errno != EAGAIN && errno != EINTR))
            r->ended = 1; /* its end, or bytes after the end marker: ignored */
        else if (drain_output(r), wait_pipes(r))
            *killed = r->timed_out;
    }
    if (*killed)
        kill(pid, SIGKILL);
    for (;;) {
        const pid_t got = waitpid(pid, wstatus, *killed ? 0 : WNOHANG);
        if (got == pid)
            return 0;
        if (got < 0 && errno != EINTR)
            return -1;
        if (got == 0) { /* between closing its files and becoming a zombie, or still running */
            if (r->deadline_ms > 0 && vr_now_ms() > r->deadline_ms) {
                r->timed_out = *killed = 1;
                kill(pid, SIGKILL);
            } else {
                const struct timespec ms = {0, 1000000};
                nanosleep(&ms, NULL);
            }
        }
    }
}

static const char *signal_text(int sig)
{
    switch (sig) {
    case SIGABRT: return "SIGABRT: double free or heap corruption, or a failed check";
    case SIGSEGV: return "SIGSEGV: an invalid memory access";
    case SIGBUS: return "SIGBUS: an invalid memory access";
    case SIGFPE: return "SIGFPE: an arithmetic fault";
    case SIGILL: return "SIGILL: an illegal instruction";
    case SIGKILL: return "SIGKILL: killed from outside, e.g. by the system's out-of-memory killer";
    case SIGTERM: return "SIGTERM: terminated from outside";
    default: return NULL;
    }
}

/* The last non-empty line the child printed, printable ASCII only, quoted; "" when none. */
static void last_line(char *dst, size_t size, const reader *r)
{
    size_t end = r->tail_len;
    while (end > 0 && strchr("\n\r ", r->tail[end - 1]))
        --end;
    size_t start = end;
    while (start > 0 && r->tail[start - 1] != '\n' && r->tail[start - 1] != '\r')
        --start;
    if (end - start > 160)
        start = end - 160;
    dst[0] = 0;
    if (start == end)
        return;
    size_t n = (size_t)snprintf(dst, size, ": \"");
    for (size_t i = start; i < end && n + 3 < size; ++i) {
        const unsigned char c = (unsigned char)r->tail[i];
        dst[n++] = c >= 32 && c < 127 && c != '"' ? (char)c : '?';
    }
    snprintf(dst + n, size - n, "\"");
}

static vr_status out_of_memory(const child_shared *sh, const vr_child_limits *limits,
                               const char *path, const char *who)
{
    if (!sh->limited)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %s ran out of memory reading it: the file declares "
                        "more data than it holds, or is too large for this machine", path, who);
    if (sh->inherited)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %s needed more than %llu MiB of memory reading it and "
                        "was stopped (out of memory under the process's address-space limit): "
                        "the file declares more data than it holds, or is too large; raise the "
                        "limit (ulimit -v)", path, who, (unsigned long long)sh->limit_mib);
    return VR_ERROR(VR_ERR_FORMAT, "%s: %s needed more than %llu MiB of memory reading it and was "
                    "stopped (out of memory at its limit): the file declares more data than it "
                    "holds, or is very large; set %s=N (MiB, 0: no limit) to allow more", path,
                    who, (unsigned long long)sh->limit_mib, limits->memory_env);
}

/* The message for a child that did not deliver a whole, consistent scene. */
static vr_status child_failed(const reader *r, recv_state st, const char *bad, int wstatus,
                              int waited, int killed, const child_shared *sh,
                              const vr_child_limits *limits, const char *path, const char *who)
{
    char said[200];
    last_line(said, sizeof said, r);
    if (r->timed_out)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %s did not finish reading it within %u s and was "
                        "stopped: the file is malformed or very large; set %s=N (seconds, 0: no "
                        "limit) to wait longer", path, who, limits->timeout_s, limits->timeout_env);
    if (st == RECV_BAD)
        return VR_ERROR(VR_ERR_FORMAT, "%s: %s returned inconsistent data (%s): the file "
                        "probably corrupted its memory; the file is corrupt or uses a feature %s "
                        "cannot read", path, who, bad, who);
    if (sh->new_failed)
        return out_of_memory(sh, limits, path, who);
    if (waited && !killed && WIFSIGNALED(wstatus)) {
        const int sig = WTERMSIG(wstatus);
        const char *text = signal_text(sig);
        char num[32];
        snprintf(num, sizeof num, "signal %d", sig);
        return VR_ERROR(VR_ERR_FORMAT, "%s: %s crashed reading it (%s%s); the file is corrupt or "
                        "uses a feature %s cannot read", path, who, text ? text : num, said, who);
    }
    if (waited && WIFEXITED(wstatus))
        return VR_ERROR(VR_ERR_FORMAT, "%s: %s stopped reading it without a result (exit status "
                        "%d%s); the file is corrupt or uses a feature %s cannot read", path, who,
                        WEXITSTATUS(wstatus), said, who);
    return VR_ERROR(VR_ERR_FORMAT, "%s: %s stopped reading it without a result%s; the file is "
                    "corrupt or uses a feature %s cannot read", path, who, said, who);
}

vr_status vr_scene_in_child(vr_scene *out, void *result, size_t result_bytes, vr_child_fn fn,
                            void *arg, const vr_child_limits *limits, const char *path,
                            const char *who)
{
    int data[2] = {-1, -1}, output[2] = {-1, -1};
    child_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                            -1, 0);
    if (sh == MAP_FAILED || pipe2(data, O_CLOEXEC) || pipe2(output, O_CLOEXEC)) {
        const int e = errno;
        for (int i = 0; i < 2; ++i) {
            if (data[i] >= 0)
                close(data[i]);
            if (output[i] >= 0)
                close(output[i]);
        }
        if (sh != MAP_FAILED)
            munmap(sh, sizeof *sh);
        return VR_ERROR(VR_ERR_IO, "%s: cannot set up the process that runs %s: %s", path, who,
                        strerror(e));
    }
    memset(sh, 0, sizeof *sh);
    (void)fcntl(data[0], F_SETPIPE_SZ, PIPE_BYTES); /* best effort: the default 64 KB works */
    const pid_t parent = getpid();
    const double start = vr_now_ms();
    fflush(NULL); /* the child must not inherit unwritten output (it never flushes, but assimp
                   * could print enough to make stdio flush) */
    const pid_t pid = fork();
    if (pid == 0) {
        close(data[0]);
        close(output[0]);
        child_main(data[1], output[1], sh, parent, limits, fn, arg, result, result_bytes);
    }
    const int fork_errno = errno;
    close(data[1]);
    close(output[1]);
    if (pid < 0) {
        close(data[0]);
        close(output[0]);
        munmap(sh, sizeof *sh);
        return VR_ERROR(fork_errno == ENOMEM ? VR_ERR_OOM : VR_ERR_IO,
                        "%s: cannot start the process that runs %s (fork: %s); free memory or "
                        "processes and try again", path, who, strerror(fork_errno));
    }
    fcntl(data[0], F_SETFL, O_NONBLOCK);
    fcntl(output[0], F_SETFL, O_NONBLOCK);
    reader r;
    memset(&r, 0, sizeof r);
    r.data_fd = data[0];
    r.out_fd = output[0];
    r.deadline_ms = limits->timeout_s ? start + 1e3 * limits->timeout_s : 0;

    wire_head head;
    const char *bad = "";
    const recv_state st = receive(&r, out, &head, result, result_bytes, sh, &bad);
    int wstatus = 0, killed = 0;
    /* inconsistent data: the child is killed at once; one that ended early is waited for */
    const int waited = reap(&r, pid, &wstatus, st == RECV_BAD || st == RECV_OOM, &killed) == 0;
    if (waited)
        drain_output(&r); /* its last words (the child is gone: this reads to the end) */
    close(data[0]);
    if (r.out_fd >= 0)
        close(r.out_fd);

    vr_status s = VR_OK;
    if (st == RECV_OOM)
        s = VR_ERROR(VR_ERR_OOM, "%s: out of memory for the scene %s read", path, who);
    else if (st != RECV_OK || r.timed_out || !waited || !WIFEXITED(wstatus) ||
             WEXITSTATUS(wstatus) != 0)
        s = child_failed(&r, st, bad, wstatus, waited, killed, sh, limits, path, who);
    else if (head.status != VR_OK && (sh->new_failed || head.status == VR_ERR_OOM))
        s = out_of_memory(sh, limits, path, who);
    else if (head.status != VR_OK)
        s = vr_set_error_at((vr_status)head.status, head.where, "%s", head.message);
    munmap(sh, sizeof *sh);
    if (s) {
        for (uint32_t i = 0; i < out->draw_count; ++i)
            vr_mesh_free(&out->draws[i].mesh);
        free(out->draws);
        out->draws = NULL;
        out->draw_count = 0;
        out->repaired = 0;
        out->repair_note[0] = 0;
    }
    return s;
}
