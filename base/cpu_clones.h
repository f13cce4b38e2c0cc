// CLONED_FOR_AVX2 before a function: compiled twice, for AVX2 (with FMA:
// x86-64-v3, where GCC knows the level, from GCC 12) and for the baseline,
// the CPU's features choosing one when the program loads (GCC's
// target_clones: x86-64, ELF's ifunc; an arch=<cpu> clone would be chosen by
// the CPU's model, not its features). Elsewhere, or with another compiler,
// the baseline alone. The clones' roundings may differ (FMA contracts a
// multiply-add): floating-point results by a few ulps from one machine to
// another; integer ones not at all.
#pragma once

#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__)
#if __GNUC__ >= 12
#define CLONED_FOR_AVX2 __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define CLONED_FOR_AVX2 __attribute__((target_clones("avx2", "default")))
#endif
#else
#define CLONED_FOR_AVX2
#endif
