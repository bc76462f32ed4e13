//go:build amd64 && !purego

#include "textflag.h"

// The double SHA-256 of 80-byte block headers with the x86 SHA extensions:
// three compressions per header (its two blocks, then the 32-byte digest's
// one block) with the padding as constants, and the intermediate digest
// fed to the second hash as message words without leaving the registers.
//
// Registers: X1 and X2 hold the state in the SHA-NI layout (ABEF and CDGH:
// dwords F, E, B, A and H, G, D, C from the lowest), X3 to X6 the message
// schedule (four words each), X0 the message words plus round constants
// for SHA256RNDS2, X7 a temporary, X8 the byte-swap mask, AX the round
// constants. The two-header version keeps the second header's state in X9
// and X10 and its schedule in X11 to X14, and both states at the start of
// a block on the stack; the one-header version keeps its start state in X9
// and X10.

// ROUNDS4 runs four rounds on message words m with constants K[koff/4:].
#define ROUNDS4(m, koff) \
	MOVO        m, X0; \
	MOVOU       koff(AX), X7; \
	PADDD       X7, X0; \
	SHA256RNDS2 X0, X1, X2; \
	PSHUFD      $0x0e, X0, X0; \
	SHA256RNDS2 X0, X2, X1

// SCHED replaces m0 (words t-16 to t-13) with words t to t+3 of the
// message schedule; m1, m2 and m3 hold words t-12 to t-1.
#define SCHED(m0, m1, m2, m3) \
	SHA256MSG1 m1, m0; \
	MOVO       m3, X7; \
	PALIGNR    $4, m2, X7; \
	PADDD      X7, m0; \
	SHA256MSG2 m3, m0

// COMPRESS runs the 64 rounds of one block whose first 16 message words are
// in X3 to X6 on the state in X1 and X2.
#define COMPRESS \
	MOVO X1, X9; \
	MOVO X2, X10; \
	ROUNDS4(X3, 0); SCHED(X3, X4, X5, X6); \
	ROUNDS4(X4, 16); SCHED(X4, X5, X6, X3); \
	ROUNDS4(X5, 32); SCHED(X5, X6, X3, X4); \
	ROUNDS4(X6, 48); SCHED(X6, X3, X4, X5); \
	ROUNDS4(X3, 64); SCHED(X3, X4, X5, X6); \
	ROUNDS4(X4, 80); SCHED(X4, X5, X6, X3); \
	ROUNDS4(X5, 96); SCHED(X5, X6, X3, X4); \
	ROUNDS4(X6, 112); SCHED(X6, X3, X4, X5); \
	ROUNDS4(X3, 128); SCHED(X3, X4, X5, X6); \
	ROUNDS4(X4, 144); SCHED(X4, X5, X6, X3); \
	ROUNDS4(X5, 160); SCHED(X5, X6, X3, X4); \
	ROUNDS4(X6, 176); SCHED(X6, X3, X4, X5); \
	ROUNDS4(X3, 192); \
	ROUNDS4(X4, 208); \
	ROUNDS4(X5, 224); \
	ROUNDS4(X6, 240); \
	PADDD X9, X1; \
	PADDD X10, X2

// ROUNDS4X2 runs four rounds of both headers with constants K[koff/4:]. One
// SHA256RNDS2 waits for the one before it, so a single header leaves the
// SHA unit idle most of the time: interleaved, two take little more time
// than one.
#define ROUNDS4X2(ma, mb, koff) \
	MOVOU       koff(AX), X7; \
	MOVO        ma, X0; \
	PADDD       X7, X0; \
	SHA256RNDS2 X0, X1, X2; \
	PSHUFD      $0x0e, X0, X0; \
	SHA256RNDS2 X0, X2, X1; \
	MOVO        mb, X0; \
	PADDD       X7, X0; \
	SHA256RNDS2 X0, X9, X10; \
	PSHUFD      $0x0e, X0, X0; \
	SHA256RNDS2 X0, X10, X9

// COMPRESSX2 runs the 64 rounds of one block of each header.
#define COMPRESSX2 \
	MOVOU X1, 0(SP); \
	MOVOU X2, 16(SP); \
	MOVOU X9, 32(SP); \
	MOVOU X10, 48(SP); \
	ROUNDS4X2(X3, X11, 0); SCHED(X3, X4, X5, X6); SCHED(X11, X12, X13, X14); \
	ROUNDS4X2(X4, X12, 16); SCHED(X4, X5, X6, X3); SCHED(X12, X13, X14, X11); \
	ROUNDS4X2(X5, X13, 32); SCHED(X5, X6, X3, X4); SCHED(X13, X14, X11, X12); \
	ROUNDS4X2(X6, X14, 48); SCHED(X6, X3, X4, X5); SCHED(X14, X11, X12, X13); \
	ROUNDS4X2(X3, X11, 64); SCHED(X3, X4, X5, X6); SCHED(X11, X12, X13, X14); \
	ROUNDS4X2(X4, X12, 80); SCHED(X4, X5, X6, X3); SCHED(X12, X13, X14, X11); \
	ROUNDS4X2(X5, X13, 96); SCHED(X5, X6, X3, X4); SCHED(X13, X14, X11, X12); \
	ROUNDS4X2(X6, X14, 112); SCHED(X6, X3, X4, X5); SCHED(X14, X11, X12, X13); \
	ROUNDS4X2(X3, X11, 128); SCHED(X3, X4, X5, X6); SCHED(X11, X12, X13, X14); \
	ROUNDS4X2(X4, X12, 144); SCHED(X4, X5, X6, X3); SCHED(X12, X13, X14, X11); \
	ROUNDS4X2(X5, X13, 160); SCHED(X5, X6, X3, X4); SCHED(X13, X14, X11, X12); \
	ROUNDS4X2(X6, X14, 176); SCHED(X6, X3, X4, X5); SCHED(X14, X11, X12, X13); \
	ROUNDS4X2(X3, X11, 192); \
	ROUNDS4X2(X4, X12, 208); \
	ROUNDS4X2(X5, X13, 224); \
	ROUNDS4X2(X6, X14, 240); \
	MOVOU 0(SP), X7; \
	PADDD X7, X1; \
	MOVOU 16(SP), X7; \
	PADDD X7, X2; \
	MOVOU 32(SP), X7; \
	PADDD X7, X9; \
	MOVOU 48(SP), X7; \
	PADDD X7, X10

// TOWORDS turns the state in sa and sb into the words H0 to H3 (sa) and H4
// to H7 (sb), from the lowest dword.
#define TOWORDS(sa, sb) \
	PSHUFD  $0x1b, sa, sa; \
	PSHUFD  $0xb1, sb, sb; \
	MOVO    sa, X7; \
	PBLENDW $0xf0, sb, sa; \
	PALIGNR $0x08, X7, sb

// LOADBE loads the 16 bytes at off(SI) into m as big-endian words.
#define LOADBE(off, m) \
	MOVOU  off(SI), m; \
	PSHUFB X8, m

// func sha256dHeader(out *chainhash.Hash, in *[80]byte)
TEXT ·sha256dHeader(SB), NOSPLIT, $0-16
	MOVQ  out+0(FP), DI
	MOVQ  in+8(FP), SI
	LEAQ  k256<>(SB), AX
	MOVOU flipMask<>(SB), X8

	// First hash, block 1: bytes 0 to 63.
	MOVOU iv<>+0(SB), X1
	MOVOU iv<>+16(SB), X2
	LOADBE(0, X3)
	LOADBE(16, X4)
	LOADBE(32, X5)
	LOADBE(48, X6)
	COMPRESS

	// Block 2: bytes 64 to 79, the 0x80 byte, zeros, the length (640 bits).
	LOADBE(64, X3)
	MOVOU pad<>+0(SB), X4
	PXOR  X5, X5
	MOVOU pad<>+16(SB), X6
	COMPRESS

	// Second hash: the digest's words are the message's first eight, then
	// the 0x80 byte, zeros and the length (256 bits).
	TOWORDS(X1, X2)
	MOVO  X1, X3
	MOVO  X2, X4
	MOVOU pad<>+0(SB), X5
	MOVOU pad<>+32(SB), X6
	MOVOU iv<>+0(SB), X1
	MOVOU iv<>+16(SB), X2
	COMPRESS

	TOWORDS(X1, X2)
	PSHUFB X8, X1
	PSHUFB X8, X2
	MOVOU  X1, 0(DI)
	MOVOU  X2, 16(DI)
	RET

// func sha256dHeader2(out *[2]chainhash.Hash, in *[2][80]byte)
TEXT ·sha256dHeader2(SB), NOSPLIT, $64-16
	MOVQ  out+0(FP), DI
	MOVQ  in+8(FP), SI
	LEAQ  k256<>(SB), AX
	MOVOU flipMask<>(SB), X8

	// First hash, block 1 (the second header starts at byte 80).
	MOVOU iv<>+0(SB), X1
	MOVOU iv<>+16(SB), X2
	MOVO  X1, X9
	MOVO  X2, X10
	LOADBE(0, X3)
	LOADBE(16, X4)
	LOADBE(32, X5)
	LOADBE(48, X6)
	LOADBE(80, X11)
	LOADBE(96, X12)
	LOADBE(112, X13)
	LOADBE(128, X14)
	COMPRESSX2

	// Block 2.
	LOADBE(64, X3)
	MOVOU pad<>+0(SB), X4
	PXOR  X5, X5
	MOVOU pad<>+16(SB), X6
	LOADBE(144, X11)
	MOVO  X4, X12
	PXOR  X13, X13
	MOVO  X6, X14
	COMPRESSX2

	// Second hash.
	TOWORDS(X1, X2)
	TOWORDS(X9, X10)
	MOVO  X1, X3
	MOVO  X2, X4
	MOVOU pad<>+0(SB), X5
	MOVOU pad<>+32(SB), X6
	MOVO  X9, X11
	MOVO  X10, X12
	MOVO  X5, X13
	MOVO  X6, X14
	MOVOU iv<>+0(SB), X1
	MOVOU iv<>+16(SB), X2
	MOVO  X1, X9
	MOVO  X2, X10
	COMPRESSX2

	TOWORDS(X1, X2)
	TOWORDS(X9, X10)
	PSHUFB X8, X1
	PSHUFB X8, X2
	PSHUFB X8, X9
	PSHUFB X8, X10
	MOVOU  X1, 0(DI)
	MOVOU  X2, 16(DI)
	MOVOU  X9, 32(DI)
	MOVOU  X10, 48(DI)
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// flipMask byte-swaps each dword (PSHUFB).
DATA flipMask<>+0(SB)/8, $0x0405060700010203
DATA flipMask<>+8(SB)/8, $0x0c0d0e0f08090a0b
GLOBL flipMask<>(SB), RODATA|NOPTR, $16

// iv is the initial state, ABEF then CDGH.
DATA iv<>+0(SB)/8, $0x510e527f9b05688c
DATA iv<>+8(SB)/8, $0x6a09e667bb67ae85
DATA iv<>+16(SB)/8, $0x1f83d9ab5be0cd19
DATA iv<>+24(SB)/8, $0x3c6ef372a54ff53a
GLOBL iv<>(SB), RODATA|NOPTR, $32

// pad holds padding words: 0x80000000, 0, 0, 0; then 0, 0, 0, 640 (an
// 80-byte message); then 0, 0, 0, 256 (a 32-byte message).
DATA pad<>+0(SB)/8, $0x0000000080000000
DATA pad<>+8(SB)/8, $0
DATA pad<>+16(SB)/8, $0
DATA pad<>+24(SB)/8, $0x0000028000000000
DATA pad<>+32(SB)/8, $0
DATA pad<>+40(SB)/8, $0x0000010000000000
GLOBL pad<>(SB), RODATA|NOPTR, $48

// k256 holds the 64 round constants.
DATA k256<>+0(SB)/4, $0x428a2f98
DATA k256<>+4(SB)/4, $0x71374491
DATA k256<>+8(SB)/4, $0xb5c0fbcf
DATA k256<>+12(SB)/4, $0xe9b5dba5
DATA k256<>+16(SB)/4, $0x3956c25b
DATA k256<>+20(SB)/4, $0x59f111f1
DATA k256<>+24(SB)/4, $0x923f82a4
DATA k256<>+28(SB)/4, $0xab1c5ed5
DATA k256<>+32(SB)/4, $0xd807aa98
DATA k256<>+36(SB)/4, $0x12835b01
DATA k256<>+40(SB)/4, $0x243185be
DATA k256<>+44(SB)/4, $0x550c7dc3
DATA k256<>+48(SB)/4, $0x72be5d74
DATA k256<>+52(SB)/4, $0x80deb1fe
DATA k256<>+56(SB)/4, $0x9bdc06a7
DATA k256<>+60(SB)/4, $0xc19bf174
DATA k256<>+64(SB)/4, $0xe49b69c1
DATA k256<>+68(SB)/4, $0xefbe4786
DATA k256<>+72(SB)/4, $0x0fc19dc6
DATA k256<>+76(SB)/4, $0x240ca1cc
DATA k256<>+80(SB)/4, $0x2de92c6f
DATA k256<>+84(SB)/4, $0x4a7484aa
DATA k256<>+88(SB)/4, $0x5cb0a9dc
DATA k256<>+92(SB)/4, $0x76f988da
DATA k256<>+96(SB)/4, $0x983e5152
DATA k256<>+100(SB)/4, $0xa831c66d
DATA k256<>+104(SB)/4, $0xb00327c8
DATA k256<>+108(SB)/4, $0xbf597fc7
DATA k256<>+112(SB)/4, $0xc6e00bf3
DATA k256<>+116(SB)/4, $0xd5a79147
DATA k256<>+120(SB)/4, $0x06ca6351
DATA k256<>+124(SB)/4, $0x14292967
DATA k256<>+128(SB)/4, $0x27b70a85
DATA k256<>+132(SB)/4, $0x2e1b2138
DATA k256<>+136(SB)/4, $0x4d2c6dfc
DATA k256<>+140(SB)/4, $0x53380d13
DATA k256<>+144(SB)/4, $0x650a7354
DATA k256<>+148(SB)/4, $0x766a0abb
DATA k256<>+152(SB)/4, $0x81c2c92e
DATA k256<>+156(SB)/4, $0x92722c85
DATA k256<>+160(SB)/4, $0xa2bfe8a1
DATA k256<>+164(SB)/4, $0xa81a664b
DATA k256<>+168(SB)/4, $0xc24b8b70
DATA k256<>+172(SB)/4, $0xc76c51a3
DATA k256<>+176(SB)/4, $0xd192e819
DATA k256<>+180(SB)/4, $0xd6990624
DATA k256<>+184(SB)/4, $0xf40e3585
DATA k256<>+188(SB)/4, $0x106aa070
DATA k256<>+192(SB)/4, $0x19a4c116
DATA k256<>+196(SB)/4, $0x1e376c08
DATA k256<>+200(SB)/4, $0x2748774c
DATA k256<>+204(SB)/4, $0x34b0bcb5
DATA k256<>+208(SB)/4, $0x391c0cb3
DATA k256<>+212(SB)/4, $0x4ed8aa4a
DATA k256<>+216(SB)/4, $0x5b9cca4f
DATA k256<>+220(SB)/4, $0x682e6ff3
DATA k256<>+224(SB)/4, $0x748f82ee
DATA k256<>+228(SB)/4, $0x78a5636f
DATA k256<>+232(SB)/4, $0x84c87814
DATA k256<>+236(SB)/4, $0x8cc70208
DATA k256<>+240(SB)/4, $0x90befffa
DATA k256<>+244(SB)/4, $0xa4506ceb
DATA k256<>+248(SB)/4, $0xbef9a3f7
DATA k256<>+252(SB)/4, $0xc67178f2
GLOBL k256<>(SB), RODATA|NOPTR, $256
