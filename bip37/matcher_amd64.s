#include "textflag.h"

// Broadcast constants of the AVX2 kernel: MurmurHash3's (murmur.go) in
// every 32-bit lane.
#define BCAST(name, val) \
	DATA name<>+0(SB)/4, val \
	DATA name<>+4(SB)/4, val \
	DATA name<>+8(SB)/4, val \
	DATA name<>+12(SB)/4, val \
	DATA name<>+16(SB)/4, val \
	DATA name<>+20(SB)/4, val \
	DATA name<>+24(SB)/4, val \
	DATA name<>+28(SB)/4, val \
	GLOBL name<>(SB), RODATA|NOPTR, $32

BCAST(mmC1, $0xcc9e2d51)
BCAST(mmC2, $0x1b873593)
BCAST(mmN, $0xe6546b64)
BCAST(mmF1, $0x85ebca6b)
BCAST(mmF2, $0xc2b2ae35)
BCAST(mmLen20, $20)
BCAST(mmSeven, $7)

// MIX is murmurMixK on eight words in k (t is clobbered).
#define MIX(k, t) \
	VPMULLD mmC1<>(SB), k, k \
	VPSLLD $15, k, t \
	VPSRLD $17, k, k \
	VPOR t, k, k \
	VPMULLD mmC2<>(SB), k, k

// ROUND is murmurRound of h with the mixed block at k (t is clobbered).
#define ROUND(k, h, t) \
	VPXOR k, h, h \
	VPSLLD $13, h, t \
	VPSRLD $19, h, h \
	VPOR t, h, h \
	VPSLLD $2, h, t \
	VPADDD t, h, h \
	VPADDD mmN<>(SB), h, h

// FINISH xors in the length and is murmurFinish (t is clobbered).
#define FINISH(h, t) \
	VPXOR mmLen20<>(SB), h, h \
	VPSRLD $16, h, t \
	VPXOR t, h, h \
	VPMULLD mmF1<>(SB), h, h \
	VPSRLD $13, h, t \
	VPXOR t, h, h \
	VPMULLD mmF2<>(SB), h, h \
	VPSRLD $16, h, t \
	VPXOR t, h, h

// PROBE replaces the hashes in h by the filter bits they select, in bit 0
// of each lane (fastMod.mod31, then the bit at BX; a, b are clobbered).
// Y12 holds m in each 64-bit lane, Y13 m>>32 in each 32-bit lane, Y7 d in
// each 64-bit lane.
#define PROBE(h, a, b) \
	VPMULUDQ Y12, h, a \
	VPSRLQ $32, h, b \
	VPMULUDQ Y12, b, b \
	VPSRLQ $32, a, a \
	VPBLENDD $0xAA, b, a, a \
	VPMULLD Y13, h, b \
	VPADDD b, a, a \
	VPMULUDQ Y7, a, b \
	VPADDQ Y7, b, b \
	VPSRLQ $32, b, b \
	VPSRLQ $32, a, a \
	VPMULUDQ Y7, a, a \
	VPADDQ Y7, a, a \
	VPBLENDD $0xAA, a, b, h \
	VPSRLD $3, h, a \
	VPAND mmSeven<>(SB), h, h \
	VPXOR b, b, b \
	VPCMPEQD Y15, Y15, Y15 \
	VPGATHERDD Y15, (BX)(a*1), b \
	VPSRLVD h, b, h

// func match20AVX2(w *Words20, n int, ks *blocks20, seed0, seed1 uint32, bits *byte, m, dd uint64) uint64
//
// Two loops with independent iterations the CPU overlaps: the first mixes
// the data blocks of eight elements at a time into ks, the second hashes
// sixteen elements at a time with both seeds (four MurmurHash3 chains
// interleaved) and probes the bits.
TEXT ·match20AVX2(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ n+8(FP), DX
	MOVQ ks+16(FP), DI
	MOVQ bits+32(FP), BX
	MOVQ DX, R10
	SHRQ $3, R10
	MOVQ DI, R11

mix:
	VMOVDQU 0(SI), Y0
	VMOVDQU 256(SI), Y1
	VMOVDQU 512(SI), Y2
	VMOVDQU 768(SI), Y3
	VMOVDQU 1024(SI), Y4
	MIX(Y0, Y5)
	MIX(Y1, Y6)
	MIX(Y2, Y5)
	MIX(Y3, Y6)
	MIX(Y4, Y5)
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y1, 256(DI)
	VMOVDQU Y2, 512(DI)
	VMOVDQU Y3, 768(DI)
	VMOVDQU Y4, 1024(DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ R10
	JNZ mix

	// VMOVQ, not MOVQ: a legacy SSE write to an X register while the Y
	// registers' upper halves are in use costs a merge (measured: three
	// times slower kernel).
	MOVL seed0+24(FP), AX
	VMOVQ AX, X10
	VPBROADCASTD X10, Y10
	MOVL seed1+28(FP), AX
	VMOVQ AX, X11
	VPBROADCASTD X11, Y11
	VPBROADCASTQ m+40(FP), Y12
	MOVQ m+40(FP), AX
	SHRQ $32, AX
	VMOVQ AX, X13
	VPBROADCASTD X13, Y13
	VPBROADCASTQ dd+48(FP), Y7
	MOVQ R11, DI
	SHRQ $4, DX
	XORQ R8, R8
	XORQ R9, R9

probe:
	VMOVDQA Y10, Y8
	VMOVDQA Y11, Y9
	VMOVDQA Y10, Y3
	VMOVDQA Y11, Y6
	ROUND(0(DI), Y8, Y1)
	ROUND(0(DI), Y9, Y2)
	ROUND(32(DI), Y3, Y4)
	ROUND(32(DI), Y6, Y5)
	ROUND(256(DI), Y8, Y1)
	ROUND(256(DI), Y9, Y2)
	ROUND(288(DI), Y3, Y4)
	ROUND(288(DI), Y6, Y5)
	ROUND(512(DI), Y8, Y1)
	ROUND(512(DI), Y9, Y2)
	ROUND(544(DI), Y3, Y4)
	ROUND(544(DI), Y6, Y5)
	ROUND(768(DI), Y8, Y1)
	ROUND(768(DI), Y9, Y2)
	ROUND(800(DI), Y3, Y4)
	ROUND(800(DI), Y6, Y5)
	ROUND(1024(DI), Y8, Y1)
	ROUND(1024(DI), Y9, Y2)
	ROUND(1056(DI), Y3, Y4)
	ROUND(1056(DI), Y6, Y5)
	FINISH(Y8, Y1)
	FINISH(Y9, Y2)
	FINISH(Y3, Y4)
	FINISH(Y6, Y5)
	PROBE(Y8, Y1, Y2)
	PROBE(Y9, Y4, Y5)
	VPAND Y9, Y8, Y8
	PROBE(Y3, Y1, Y2)
	PROBE(Y6, Y4, Y5)
	VPAND Y6, Y3, Y3
	VPSLLD $31, Y8, Y8
	VMOVMSKPS Y8, AX
	VPSLLD $31, Y3, Y3
	VMOVMSKPS Y3, R12
	SHLQ $8, R12
	ORQ R12, AX
	MOVQ R9, CX
	SHLQ CX, AX
	ORQ AX, R8
	ADDQ $64, DI
	ADDQ $16, R9
	DECQ DX
	JNZ probe

	VZEROUPPER
	MOVQ R8, ret+56(FP)
	RET
