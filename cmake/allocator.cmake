# The malloc the controller executable (propertyoverride-controller) runs on.
#
#   -DPO_ALLOCATOR=jemalloc|mimalloc|libc   (empty: jemalloc for a Release build, libc otherwise)
#
# The controller allocates per json-c node and per list entry from 4 worker threads: glibc's
# malloc was about a quarter of its CPU on the real kube-apiserver, and jemalloc takes about a
# quarter off its CPU per reconcile there, for a slightly higher peak (docs/benchmarks.md,
# "The allocator"). The one-shot CLI keeps glibc's (jemalloc's start-up costs it more than it
# saves), as do the tests' own executables. Linked dynamically: an LD_PRELOAD shim
# (tests/cli/failalloc.c) still comes before it in the symbol search, so an allocation-failure
# sweep of the executable fails the allocation it means to. ASan, UBSan's runtime, libFuzzer and
# valgrind replace malloc themselves: those builds take libc.
#
# po_link_allocator(TARGET) links TARGET with it; PO_ALLOCATOR_USED is what was linked,
# PO_ALLOCATOR_WANTED what the build asked for (the ctest allocator_linked checks the running
# executable binds malloc to the latter).
set(PO_ALLOCATOR "" CACHE STRING "malloc of the controller executable: jemalloc, mimalloc or libc (empty: jemalloc for Release)")
set_property(CACHE PO_ALLOCATOR PROPERTY STRINGS "" jemalloc mimalloc libc)

set(_po_alloc_asked "${PO_ALLOCATOR}")
if(_po_alloc_asked STREQUAL "")
  if(CMAKE_BUILD_TYPE STREQUAL "Release" AND NOT PO_SANITIZE AND NOT PO_FUZZ)
    set(_po_alloc_asked jemalloc)
  else()
    set(_po_alloc_asked libc)
  endif()
  set(_po_alloc_explicit OFF)
else()
  set(_po_alloc_explicit ON)
endif()
if(NOT _po_alloc_asked MATCHES "^(jemalloc|mimalloc|libc)$")
  message(FATAL_ERROR "PO_ALLOCATOR='${PO_ALLOCATOR}': valid values are jemalloc, mimalloc, libc, "
                      "or empty for the build type's default (jemalloc for Release, libc otherwise)")
endif()
if(NOT _po_alloc_asked STREQUAL "libc" AND (PO_SANITIZE OR PO_FUZZ))
  message(FATAL_ERROR "PO_ALLOCATOR=${_po_alloc_asked} with PO_SANITIZE or PO_FUZZ: ASan and libFuzzer "
                      "replace malloc themselves; configure with -DPO_ALLOCATOR=libc (or leave it empty)")
endif()

# Debian bookworm's packages, installed by scripts/setup.sh at a pinned version.
set(_po_alloc_pkg_jemalloc "libjemalloc-dev 5.3.0-1")
set(_po_alloc_pkg_mimalloc "libmimalloc-dev 2.0.9+ds-2")
set(PO_ALLOCATOR_USED libc)
set(PO_ALLOCATOR_LIBRARY "")
if(NOT _po_alloc_asked STREQUAL "libc")
  # The shared object by its soname first: a static copy would sit in the executable itself,
  # ahead of any LD_PRELOAD shim.
  if(_po_alloc_asked STREQUAL "jemalloc")
    find_library(PO_JEMALLOC_LIBRARY NAMES libjemalloc.so.2 jemalloc)
    set(_po_alloc_lib "${PO_JEMALLOC_LIBRARY}")
  else()
    find_library(PO_MIMALLOC_LIBRARY NAMES libmimalloc.so.2 mimalloc)
    set(_po_alloc_lib "${PO_MIMALLOC_LIBRARY}")
  endif()
  if(_po_alloc_lib)
    set(PO_ALLOCATOR_USED ${_po_alloc_asked})
    set(PO_ALLOCATOR_LIBRARY "${_po_alloc_lib}")
  else()
    string(CONCAT _po_alloc_why "${_po_alloc_asked} is not installed (Debian's ${_po_alloc_pkg_${_po_alloc_asked}}, "
                  "which scripts/setup.sh installs)")
    if(_po_alloc_explicit OR "$ENV{PO_REQUIRE_REAL}" STREQUAL "1")
      message(FATAL_ERROR "PO_ALLOCATOR=${_po_alloc_asked}: ${_po_alloc_why}; or configure with -DPO_ALLOCATOR=libc")
    endif()
    # A developer's machine before setup: it builds, says so, and allocator_linked fails.
    message(WARNING "the Release default allocator ${_po_alloc_why}: linking glibc's malloc instead, "
                    "and the ctest allocator_linked fails until it is installed")
  endif()
endif()
# What the build asked for: allocator_linked compares the executable with it, not with what was
# found, so a missing package cannot slip through as a passing libc build.
set(PO_ALLOCATOR_WANTED ${_po_alloc_asked})
message(STATUS "propertyoverride allocator: ${PO_ALLOCATOR_USED} ${PO_ALLOCATOR_LIBRARY}")

function(po_link_allocator target)
  if(PO_ALLOCATOR_LIBRARY)
    # Kept although no object names it first (the compiler links with --as-needed, and this
    # comes before the libraries that call malloc), and needed before libc: the dynamic linker
    # then binds every library's malloc, glibc's own included, to it.
    target_link_libraries(${target} PRIVATE "-Wl,--push-state,--no-as-needed" "${PO_ALLOCATOR_LIBRARY}"
                          "-Wl,--pop-state")
  endif()
endfunction()
