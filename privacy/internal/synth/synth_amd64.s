#include "textflag.h"

// Constants of the AVX2 generator, one per 64-bit lane: splitmix64's
// multipliers split into their low and high 32 bits (VPMULUDQ multiplies
// the low halves), and its Weyl increment times 1, 2 and 56 modulo 2^64.
#define BCAST64(name, val) \
	DATA name<>+0(SB)/8, val \
	DATA name<>+8(SB)/8, val \
	DATA name<>+16(SB)/8, val \
	DATA name<>+24(SB)/8, val \
	GLOBL name<>(SB), RODATA|NOPTR, $32

BCAST64(smMul1Lo, $0x1ce4e5b9)
BCAST64(smMul1Hi, $0xbf58476d)
BCAST64(smMul2Lo, $0x133111eb)
BCAST64(smMul2Hi, $0x94d049bb)
BCAST64(smWeyl1, $0x9e3779b97f4a7c15)
BCAST64(smWeyl2, $0x3c6ef372fe94f82a)
BCAST64(smWeyl56, $0x9c22a093d84b2498)

// MUL64 sets z to z*c modulo 2^64 from 32-bit products (lo, hi: c's
// halves; t, p are clobbered).
#define MUL64(z, lo, hi, t, p) \
	VPMULUDQ lo, z, p \
	VPSRLQ $32, z, t \
	VPMULUDQ lo, t, t \
	VPMULUDQ hi, z, z \
	VPADDQ z, t, t \
	VPSLLQ $32, t, t \
	VPADDQ t, p, z

// XORSHIFT is z ^= z >> s (t is clobbered).
#define XORSHIFT(z, s, t) \
	VPSRLQ s, z, t \
	VPXOR t, z, z

// MIX64 is Mix64 on the four 64-bit lanes of z (t, p are clobbered).
#define MIX64(z, t, p) \
	XORSHIFT(z, $30, t) \
	MUL64(z, Y15, Y14, t, p) \
	XORSHIFT(z, $27, t) \
	MUL64(z, Y13, Y12, t, p) \
	XORSHIFT(z, $31, t)

// LOWORDS packs the low 32 bits of a's and b's lanes, in order, into a
// (t is clobbered); HIWORDS packs the high 32 bits into t.
#define LOWORDS(a, b, t) \
	VSHUFPS $0x88, b, a, t \
	VPERMQ $0xD8, t, t

#define HIWORDS(a, b, t) \
	VSHUFPS $0xDD, b, a, t \
	VPERMQ $0xD8, t, t

// func candidateWordsAVX2(start *[8]uint64, w *HashWords, groups int)
//
// Eight candidates per iteration: their three lanes' splitmix64 outputs
// in six vectors of four, stored word-major in w's first 8*groups columns.
// start holds the eight candidates' first lane inputs.
TEXT ·candidateWordsAVX2(SB), NOSPLIT, $0-24
	MOVQ start+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ groups+16(FP), DX
	VMOVDQU 0(SI), Y8
	VMOVDQU 32(SI), Y9
	VMOVDQU smMul1Lo<>(SB), Y15
	VMOVDQU smMul1Hi<>(SB), Y14
	VMOVDQU smMul2Lo<>(SB), Y13
	VMOVDQU smMul2Hi<>(SB), Y12
	VMOVDQU smWeyl1<>(SB), Y11
	VMOVDQU smWeyl2<>(SB), Y10

loop:
	// Lane 0: words 0 and 1.
	VMOVDQA Y8, Y0
	VMOVDQA Y9, Y3
	MIX64(Y0, Y1, Y2)
	MIX64(Y3, Y4, Y5)
	LOWORDS(Y0, Y3, Y1)
	HIWORDS(Y0, Y3, Y4)
	VMOVDQU Y1, 0(DI)
	VMOVDQU Y4, 256(DI)
	// Lane 1: words 2 and 3.
	VPADDQ Y11, Y8, Y0
	VPADDQ Y11, Y9, Y3
	MIX64(Y0, Y1, Y2)
	MIX64(Y3, Y4, Y5)
	LOWORDS(Y0, Y3, Y1)
	HIWORDS(Y0, Y3, Y4)
	VMOVDQU Y1, 512(DI)
	VMOVDQU Y4, 768(DI)
	// Lane 2: word 4.
	VPADDQ Y10, Y8, Y0
	VPADDQ Y10, Y9, Y3
	MIX64(Y0, Y1, Y2)
	MIX64(Y3, Y4, Y5)
	LOWORDS(Y0, Y3, Y1)
	VMOVDQU Y1, 1024(DI)

	VPADDQ smWeyl56<>(SB), Y8, Y8
	VPADDQ smWeyl56<>(SB), Y9, Y9
	ADDQ $32, DI
	DECQ DX
	JNZ loop

	VZEROUPPER
	RET
