# Writes OUT (a C file with the build provenance) when its content changes.
# Run with cmake -P at every build (kernels/base/CMakeLists.txt).
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR NOT rev)
  set(rev "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no
                  WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(dirty)
    set(rev "${rev}-dirty")
  endif()
endif()
# The kernels' digest: SHA-256 over each source's path (from the top) and
# content, in a fixed order; the first 16 hex digits are recorded.
string(REPLACE "|" ";" kernel_files "${KERNEL_FILES}")
set(kernel_text "")
foreach(f IN LISTS kernel_files)
  file(SHA256 "${f}" h)
  file(RELATIVE_PATH rel "${SRC}" "${f}")
  string(APPEND kernel_text "${rel} ${h}\n")
endforeach()
string(SHA256 kernel_digest "${kernel_text}")
string(SUBSTRING "${kernel_digest}" 0 16 kernel_digest)
set(content "/* Generated at build time by cmake/buildinfo.cmake: do not edit. */
#include \"kernels/base/buildinfo.h\"
const char *buildinfo_version(void) { return \"${VERSION}\"; }
const char *buildinfo_git_revision(void) { return \"${rev}\"; }
const char *buildinfo_nvcc_version(void) { return \"${NVCC}\"; }
const char *buildinfo_cuda_architectures(void) { return \"${ARCHS}\"; }
const char *buildinfo_cuda_flags(void) { return \"${FLAGS}\"; }
const char *buildinfo_kernel_digest(void) { return \"${kernel_digest}\"; }
")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL content)
  file(WRITE ${OUT} "${content}")
endif()
