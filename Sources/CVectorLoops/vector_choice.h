#ifndef CVECTOR_LOOPS_VECTOR_CHOICE_H
#define CVECTOR_LOOPS_VECTOR_CHOICE_H

// The one place CVectorLoops chooses its instructions at compile time. Every loop has a scalar
// path; the vector paths are x86-64's (SSE2, which every x86-64 processor has, and AVX2, used only
// where the processor has it: see cb64v_available). Elsewhere (arm64 among them) the scalar paths
// are the only ones: the loops they replace are short scans and base64 blocks, and NEON versions
// have not been written or measured.
//
// Building with -DCVL_SCALAR_ONLY (`swift build -Xcc -DCVL_SCALAR_ONLY`) compiles the scalar
// paths alone on x86-64 too, which is how CI runs the whole test suite on them.
#if defined(__x86_64__) && !defined(CVL_SCALAR_ONLY) && (defined(__clang__) || defined(__GNUC__))
#define CVL_SSE2 1
#define CVL_AVX2 1
#else
#define CVL_SSE2 0
#define CVL_AVX2 0
#endif

#endif
