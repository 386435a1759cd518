// assimp_assert.cpp - assimp's internal assertions become import errors instead of aborting the
// process. Debian's libassimp 5.2 is built with its ai_assert checks on, and a failed one calls
// Assimp::aiAssertViolation, which aborts: a 400-byte X3D file with two USE references at scene
// level kills any program that imports it (there are 532 such checks in the 5.2.5 importers).
// This definition interposes the library's (assimp calls it through the PLT) and throws instead;
// assimp's BaseImporter::ReadFile catches std::exception and makes it the import's error. The
// only C++ in vreuse, because C cannot throw. Linked in through vr_assimp_assert_hook(), which
// load_assimp.c calls. Exercised by `vreuse_tests scenes/assimp-corrupt`.
// Also here, for the same reason: vr_watch_failed_new, with which the import's child process
// (isolate.c) learns that an operator new failed (its memory limit was hit) even when the
// std::bad_alloc then ends the process instead of the import.
#include <new>
#include <stdexcept>
#include <string>

namespace Assimp {

void aiAssertViolation(const char *expression, const char *file, int line);

// file and line name assimp's sources: messages never carry source paths
void aiAssertViolation(const char *expression, const char * /*file*/, int /*line*/)
{
    throw std::runtime_error(std::string("its internal check '") + expression +
                             "' failed: the file is malformed in a way assimp does not handle");
}

} // namespace Assimp

extern "C" int vr_assimp_assert_hook(void) { return 1; }

// set by a failed operator new in this process; a page shared with the parent (isolate.c)
static volatile int *g_new_failed;

// the default behaviour (throw std::bad_alloc), after noting it
static void note_failed_new()
{
    *g_new_failed = 1;
    throw std::bad_alloc();
}

extern "C" void vr_watch_failed_new(volatile int *flag)
{
    g_new_failed = flag;
    std::set_new_handler(note_failed_new);
}
