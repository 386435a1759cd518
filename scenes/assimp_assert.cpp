// assimp_assert.cpp - assimp's internal assertions become import errors instead of aborting the
// process. Debian's libassimp 5.2 is built with its ai_assert checks on, and a failed one calls
// Assimp::aiAssertViolation, which aborts: a 400-byte X3D file with two USE references at scene
// level kills any program that imports it (there are 532 such checks in the 5.2.5 importers).
// This definition interposes the library's (assimp calls it through the PLT) and throws instead;
// assimp's BaseImporter::ReadFile catches std::exception and makes it the import's error. The
// only C++ in vreuse, because C cannot throw. Linked in through vr_assimp_assert_hook(), which
// load_assimp.c calls. Exercised by `vreuse_tests scenes/assimp-corrupt`.
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
