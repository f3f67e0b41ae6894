//go:build !purego

#include "textflag.h"

// decryptRowsAVX512 runs the AlbyRules decryption for 32 byte streams
// (lanes) side by side; see cipher_rows.go for the layout and cipher.go for
// the algorithm. Everything is computed modulo 2^16 (fact 1 in cipher.go),
// so each lane's state fits in a 16-bit word and one YMM register holds 16
// lanes. The 32 lanes are two groups of 16 (row bytes 0..15 and 16..31) in
// separate registers: their chains are independent, so the CPU overlaps
// them (one byte's chain is about 40 cycles long: five rounds of XOR,
// multiply and add, then the fold). A ZMM form, one group of 32 lanes,
// measured half as fast: as long a chain with half the independent work,
// and 512-bit multiplies lower the clock.
//
// Instead of the 256-row table of cipher.go (no fast 16-bit table lookup
// exists on this class of CPU: VPERMW is slow and gathers slower still),
// each step recomputes the row from the fold byte, exactly as the
// reference form does: five rounds of key word, two multiplies and an add.
// Every instruction is a plain vertical one (multiply, add, XOR, shift).
//
// Per step and lane, with B = a + sum*M carried from the previous byte and
// F the fold byte replicated into both bytes of the word:
//
//	kw_0 = K_0 ^ F;  kw_r = K_r ^ F ^ p_{r-1}
//	c_r  = kw_r * 0x015A;  p_r = kw_r * M + 1
//	s_0  = B + c_0;  s_r = s_{r-1}*M + c_{r-1} + c_r + r*M
//	acc  = p_0 ^ .. ^ p_4 ^ s_0 ^ .. ^ s_4 ^ ((F ^ ciphertext) & 0xFF)
//	F'   = acc ^ acc>>8 ^ acc<<8   (the new fold, in both bytes)
//	B'   = s_4*M + c_4
//	plaintext = low byte of F' ^ F
//
// The ciphertext term only touches the low byte, where the fold of acc's
// two bytes puts it into both bytes of F'.

// Constant registers (every word of each holds the value):
//	Y20..Y24  the key words K_0..K_4 ("Al", "by", "Ru", "le", "s!")
//	Y25       M = 0x4E35, the PRNG multiplier (also 1*M for round 1)
//	Y26       0x015A, the cross2 multiplier
//	Y27       1
//	Y28       0x00FF
//	Y29..Y31  2*M, 3*M, 4*M modulo 2^16 (rounds 2, 3, 4)
//
// Lane state: Y16 B and Y17 F of lanes 0..15; Y18 B and Y19 F of lanes
// 16..31.

// ROUND is round r >= 1 of one step for one group. On entry P holds
// p_{r-1}, S s_{r-1} and CPREV c_{r-1}; on exit P holds p_r, S s_r, CCUR
// c_r, and ACC has absorbed p_r ^ s_r. CPREV is clobbered. Line by line:
// P = p_{r-1} ^ F ^ K_r = kw_r (VPTERNLOGD 0x96 is a three-way XOR);
// c_r = kw_r*0x015A; p_r = kw_r*M + 1; CPREV = c_{r-1} + c_r + r*M;
// s_r = s_{r-1}*M + CPREV; acc ^= p_r ^ s_r.
#define ROUND(KR, RM, F, ACC, P, S, CPREV, CCUR) \
	VPTERNLOGD $0x96, KR, F, P; \
	VPMULLW    Y26, P, CCUR; \
	VPMULLW    Y25, P, P; \
	VPADDW     Y27, P, P; \
	VPADDW     CCUR, CPREV, CPREV; \
	VPADDW     RM, CPREV, CPREV; \
	VPMULLW    Y25, S, S; \
	VPADDW     CPREV, S, S; \
	VPTERNLOGD $0x96, S, P, ACC

// STEP decrypts one byte of 16 lanes: the ciphertext bytes at OFF(SI),
// replaced by the plaintext. B and F are the group's state; ACC, KW, P, CA,
// S and CB are scratch. Line by line: ACC = the ciphertext bytes, one per
// word; ACC = (ciphertext ^ F) & 0xFF (VPTERNLOGD 0x28 is (A^B)&C); round 0:
// kw_0 = K_0 ^ F, c_0, p_0, s_0 = B + c_0, acc ^= p_0 ^ s_0; rounds 1..4,
// which leave c_4 in CA; B' = s_4*M + c_4; the fold F' = acc ^ acc>>8 ^
// acc<<8 into ACC; KW = F' ^ F, whose low bytes are the plaintext; F = F';
// store the low byte of each word of KW over the ciphertext, in the lanes
// of KEEP only (the complement of the next row's starts bits): a lane that
// starts a datagram's encrypted bytes at the next row holds the datagram's
// clear byte 0 in this one, which stays as it is. The new B and F are
// zeroed (zero-masking by KEEP) in those lanes too.
#define STEP(OFF, KEEP, B, F, ACC, KW, P, CA, S, CB) \
	VPMOVZXBW  OFF(SI), ACC; \
	VPTERNLOGD $0x28, Y28, F, ACC; \
	VPXORD     Y20, F, KW; \
	VPMULLW    Y26, KW, CA; \
	VPMULLW    Y25, KW, P; \
	VPADDW     Y27, P, P; \
	VPADDW     B, CA, S; \
	VPTERNLOGD $0x96, S, P, ACC; \
	ROUND(Y21, Y25, F, ACC, P, S, CA, CB); \
	ROUND(Y22, Y29, F, ACC, P, S, CB, CA); \
	ROUND(Y23, Y30, F, ACC, P, S, CA, CB); \
	ROUND(Y24, Y31, F, ACC, P, S, CB, CA); \
	VPMULLW    Y25, S, B; \
	VPADDW.Z   CA, B, KEEP, B; \
	VPSRLW     $8, ACC, KW; \
	VPSLLW     $8, ACC, P; \
	VPTERNLOGD $0x96, P, KW, ACC; \
	VPXORD     ACC, F, KW; \
	VMOVDQU16.Z ACC, KEEP, F; \
	VPMOVWB    KW, KEEP, OFF(SI)

// func decryptRowsAVX512(rows *byte, starts *uint32, steps int)
//
// rows holds steps rows of 32 bytes, row t holding byte t of each lane's
// stream; they are decrypted in place. starts[t] has bit k set where lane
// k starts a new datagram's encrypted bytes at row t: its state resets to
// zero there, and its byte at row t-1 (the datagram's clear byte 0) is
// left as it is. All
// lanes start from zero at row 0, so starts[0] is not read, but
// starts[steps] is (after the last row): starts has steps+1 entries.
TEXT ·decryptRowsAVX512(SB), NOSPLIT, $0-24
	MOVQ rows+0(FP), SI
	MOVQ starts+8(FP), R8
	MOVQ steps+16(FP), CX
	TESTQ CX, CX
	JZ   done

	MOVL $0x416C, AX
	VPBROADCASTW AX, Y20
	MOVL $0x6279, AX
	VPBROADCASTW AX, Y21
	MOVL $0x5275, AX
	VPBROADCASTW AX, Y22
	MOVL $0x6C65, AX
	VPBROADCASTW AX, Y23
	MOVL $0x7321, AX
	VPBROADCASTW AX, Y24
	MOVL $0x4E35, AX
	VPBROADCASTW AX, Y25
	MOVL $0x015A, AX
	VPBROADCASTW AX, Y26
	MOVL $1, AX
	VPBROADCASTW AX, Y27
	MOVL $0x00FF, AX
	VPBROADCASTW AX, Y28
	MOVL $0x9C6A, AX
	VPBROADCASTW AX, Y29
	MOVL $0xEA9F, AX
	VPBROADCASTW AX, Y30
	MOVL $0x38D4, AX
	VPBROADCASTW AX, Y31

	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19

loop:
	// The lanes that go on at the next row: lanes 0..15 in K1, 16..31
	// in K2.
	KMOVW 4(R8), K1
	KMOVW 6(R8), K2
	KNOTW K1, K1
	KNOTW K2, K2

	STEP(0, K1, Y16, Y17, Y0, Y1, Y2, Y3, Y4, Y5)
	STEP(16, K2, Y18, Y19, Y6, Y7, Y8, Y9, Y10, Y11)

	ADDQ $32, SI
	ADDQ $4, R8
	DECQ CX
	JNZ  loop

	VZEROUPPER

done:
	RET

// TRANSPOSE16 transposes the 16x16 byte matrix in each 128-bit half of
// Y0..Y15 (register k = matrix row k) through Y16..Y31 and back, four
// rounds of interleaving bytes, words, dwords and qwords of register
// pairs. Afterwards register i holds matrix column rev(i), where rev
// reverses the 4 bits of i (0, 8, 4, 12, 2, ...).
#define TRANSPOSE16 \
	VPUNPCKLBW Y1, Y0, Y16; \
	VPUNPCKHBW Y1, Y0, Y24; \
	VPUNPCKLBW Y3, Y2, Y17; \
	VPUNPCKHBW Y3, Y2, Y25; \
	VPUNPCKLBW Y5, Y4, Y18; \
	VPUNPCKHBW Y5, Y4, Y26; \
	VPUNPCKLBW Y7, Y6, Y19; \
	VPUNPCKHBW Y7, Y6, Y27; \
	VPUNPCKLBW Y9, Y8, Y20; \
	VPUNPCKHBW Y9, Y8, Y28; \
	VPUNPCKLBW Y11, Y10, Y21; \
	VPUNPCKHBW Y11, Y10, Y29; \
	VPUNPCKLBW Y13, Y12, Y22; \
	VPUNPCKHBW Y13, Y12, Y30; \
	VPUNPCKLBW Y15, Y14, Y23; \
	VPUNPCKHBW Y15, Y14, Y31; \
	VPUNPCKLWD Y17, Y16, Y0; \
	VPUNPCKHWD Y17, Y16, Y8; \
	VPUNPCKLWD Y19, Y18, Y1; \
	VPUNPCKHWD Y19, Y18, Y9; \
	VPUNPCKLWD Y21, Y20, Y2; \
	VPUNPCKHWD Y21, Y20, Y10; \
	VPUNPCKLWD Y23, Y22, Y3; \
	VPUNPCKHWD Y23, Y22, Y11; \
	VPUNPCKLWD Y25, Y24, Y4; \
	VPUNPCKHWD Y25, Y24, Y12; \
	VPUNPCKLWD Y27, Y26, Y5; \
	VPUNPCKHWD Y27, Y26, Y13; \
	VPUNPCKLWD Y29, Y28, Y6; \
	VPUNPCKHWD Y29, Y28, Y14; \
	VPUNPCKLWD Y31, Y30, Y7; \
	VPUNPCKHWD Y31, Y30, Y15; \
	VPUNPCKLDQ Y1, Y0, Y16; \
	VPUNPCKHDQ Y1, Y0, Y24; \
	VPUNPCKLDQ Y3, Y2, Y17; \
	VPUNPCKHDQ Y3, Y2, Y25; \
	VPUNPCKLDQ Y5, Y4, Y18; \
	VPUNPCKHDQ Y5, Y4, Y26; \
	VPUNPCKLDQ Y7, Y6, Y19; \
	VPUNPCKHDQ Y7, Y6, Y27; \
	VPUNPCKLDQ Y9, Y8, Y20; \
	VPUNPCKHDQ Y9, Y8, Y28; \
	VPUNPCKLDQ Y11, Y10, Y21; \
	VPUNPCKHDQ Y11, Y10, Y29; \
	VPUNPCKLDQ Y13, Y12, Y22; \
	VPUNPCKHDQ Y13, Y12, Y30; \
	VPUNPCKLDQ Y15, Y14, Y23; \
	VPUNPCKHDQ Y15, Y14, Y31; \
	VPUNPCKLQDQ Y17, Y16, Y0; \
	VPUNPCKHQDQ Y17, Y16, Y8; \
	VPUNPCKLQDQ Y19, Y18, Y1; \
	VPUNPCKHQDQ Y19, Y18, Y9; \
	VPUNPCKLQDQ Y21, Y20, Y2; \
	VPUNPCKHQDQ Y21, Y20, Y10; \
	VPUNPCKLQDQ Y23, Y22, Y3; \
	VPUNPCKHQDQ Y23, Y22, Y11; \
	VPUNPCKLQDQ Y25, Y24, Y4; \
	VPUNPCKHQDQ Y25, Y24, Y12; \
	VPUNPCKLQDQ Y27, Y26, Y5; \
	VPUNPCKHQDQ Y27, Y26, Y13; \
	VPUNPCKLQDQ Y29, Y28, Y6; \
	VPUNPCKHQDQ Y29, Y28, Y14; \
	VPUNPCKLQDQ Y31, Y30, Y7; \
	VPUNPCKHQDQ Y31, Y30, Y15

// func lanesToRows(rows, lanes *byte, stride, blocks int)
//
// lanesToRows interleaves 32 byte streams into rows: lane k is
// lanes[k*stride:][:blocks*16]; row t, rows[t*32:][:32], receives byte t of
// every lane. Each block of 16 bytes per lane is two 16x16 transposes at
// once: lanes k and k+16 share register k (low and high half), so a
// transposed register is a whole row.
TEXT ·lanesToRows(SB), NOSPLIT, $0-32
	MOVQ rows+0(FP), DI
	MOVQ lanes+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ blocks+24(FP), CX
	TESTQ CX, CX
	JZ   l2rdone
	MOVQ DX, R10
	SHLQ $4, R10 // R10 = 16*stride, from lane k to lane k+16

l2rblock:
	MOVQ SI, AX // AX walks lanes 0..15 of this block
	VMOVDQU (AX), X0
	VINSERTI128 $1, (AX)(R10*1), Y0, Y0
	ADDQ DX, AX
	VMOVDQU (AX), X1
	VINSERTI128 $1, (AX)(R10*1), Y1, Y1
	ADDQ DX, AX
	VMOVDQU (AX), X2
	VINSERTI128 $1, (AX)(R10*1), Y2, Y2
	ADDQ DX, AX
	VMOVDQU (AX), X3
	VINSERTI128 $1, (AX)(R10*1), Y3, Y3
	ADDQ DX, AX
	VMOVDQU (AX), X4
	VINSERTI128 $1, (AX)(R10*1), Y4, Y4
	ADDQ DX, AX
	VMOVDQU (AX), X5
	VINSERTI128 $1, (AX)(R10*1), Y5, Y5
	ADDQ DX, AX
	VMOVDQU (AX), X6
	VINSERTI128 $1, (AX)(R10*1), Y6, Y6
	ADDQ DX, AX
	VMOVDQU (AX), X7
	VINSERTI128 $1, (AX)(R10*1), Y7, Y7
	ADDQ DX, AX
	VMOVDQU (AX), X8
	VINSERTI128 $1, (AX)(R10*1), Y8, Y8
	ADDQ DX, AX
	VMOVDQU (AX), X9
	VINSERTI128 $1, (AX)(R10*1), Y9, Y9
	ADDQ DX, AX
	VMOVDQU (AX), X10
	VINSERTI128 $1, (AX)(R10*1), Y10, Y10
	ADDQ DX, AX
	VMOVDQU (AX), X11
	VINSERTI128 $1, (AX)(R10*1), Y11, Y11
	ADDQ DX, AX
	VMOVDQU (AX), X12
	VINSERTI128 $1, (AX)(R10*1), Y12, Y12
	ADDQ DX, AX
	VMOVDQU (AX), X13
	VINSERTI128 $1, (AX)(R10*1), Y13, Y13
	ADDQ DX, AX
	VMOVDQU (AX), X14
	VINSERTI128 $1, (AX)(R10*1), Y14, Y14
	ADDQ DX, AX
	VMOVDQU (AX), X15
	VINSERTI128 $1, (AX)(R10*1), Y15, Y15
	TRANSPOSE16
	VMOVDQU Y0, 0(DI)
	VMOVDQU Y8, 32(DI)
	VMOVDQU Y4, 64(DI)
	VMOVDQU Y12, 96(DI)
	VMOVDQU Y2, 128(DI)
	VMOVDQU Y10, 160(DI)
	VMOVDQU Y6, 192(DI)
	VMOVDQU Y14, 224(DI)
	VMOVDQU Y1, 256(DI)
	VMOVDQU Y9, 288(DI)
	VMOVDQU Y5, 320(DI)
	VMOVDQU Y13, 352(DI)
	VMOVDQU Y3, 384(DI)
	VMOVDQU Y11, 416(DI)
	VMOVDQU Y7, 448(DI)
	VMOVDQU Y15, 480(DI)
	ADDQ $16, SI
	ADDQ $512, DI
	DECQ CX
	JNZ  l2rblock
	VZEROUPPER

l2rdone:
	RET

// func rowsToLanes(lanes, rows *byte, stride, blocks int)
//
// rowsToLanes is the inverse of lanesToRows.
TEXT ·rowsToLanes(SB), NOSPLIT, $0-32
	MOVQ lanes+0(FP), DI
	MOVQ rows+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ blocks+24(FP), CX
	TESTQ CX, CX
	JZ   r2ldone
	MOVQ DX, R10
	SHLQ $4, R10 // R10 = 16*stride, from lane k to lane k+16

r2lblock:
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	VMOVDQU 128(SI), Y4
	VMOVDQU 160(SI), Y5
	VMOVDQU 192(SI), Y6
	VMOVDQU 224(SI), Y7
	VMOVDQU 256(SI), Y8
	VMOVDQU 288(SI), Y9
	VMOVDQU 320(SI), Y10
	VMOVDQU 352(SI), Y11
	VMOVDQU 384(SI), Y12
	VMOVDQU 416(SI), Y13
	VMOVDQU 448(SI), Y14
	VMOVDQU 480(SI), Y15
	TRANSPOSE16
	MOVQ DI, AX // AX walks lanes 0..15 of this block
	VMOVDQU X0, (AX)
	VEXTRACTI128 $1, Y0, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X8, (AX)
	VEXTRACTI128 $1, Y8, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X4, (AX)
	VEXTRACTI128 $1, Y4, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X12, (AX)
	VEXTRACTI128 $1, Y12, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X2, (AX)
	VEXTRACTI128 $1, Y2, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X10, (AX)
	VEXTRACTI128 $1, Y10, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X6, (AX)
	VEXTRACTI128 $1, Y6, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X14, (AX)
	VEXTRACTI128 $1, Y14, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X1, (AX)
	VEXTRACTI128 $1, Y1, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X9, (AX)
	VEXTRACTI128 $1, Y9, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X5, (AX)
	VEXTRACTI128 $1, Y5, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X13, (AX)
	VEXTRACTI128 $1, Y13, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X3, (AX)
	VEXTRACTI128 $1, Y3, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X11, (AX)
	VEXTRACTI128 $1, Y11, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X7, (AX)
	VEXTRACTI128 $1, Y7, (AX)(R10*1)
	ADDQ DX, AX
	VMOVDQU X15, (AX)
	VEXTRACTI128 $1, Y15, (AX)(R10*1)
	ADDQ $16, DI
	ADDQ $512, SI
	DECQ CX
	JNZ  r2lblock
	VZEROUPPER

r2ldone:
	RET

// func copyEachSSE(dst, src [][]byte)
//
// copyEachSSE does copy(dst[k], src[k]) for every k of the shorter of dst and
// src, without a call per copy: the row form copies each datagram into
// the lanes (and DecryptBatch each plaintext out of them), and a call to
// runtime.memmove per datagram cost the calling loop its registers. dst[k]
// and src[k] must not overlap unless they are the same bytes. Each copy
// moves 16 bytes at a time and the last 16 once more (overlapping what came
// before), or under 16 bytes two overlapping words of 8, 4, 2 or one byte:
// nothing is read or written outside the slices.
TEXT ·copyEachSSE(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R8
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	CMPQ R8, CX
	CMOVQLT R8, CX // CX = min(len(dst), len(src))
	TESTQ CX, CX
	JZ   cedone

celoop:
	MOVQ 0(SI), R9   // src[k]'s bytes
	MOVQ 8(SI), DX   // len(src[k])
	MOVQ 0(DI), R10  // dst[k]'s bytes
	MOVQ 8(DI), R11  // len(dst[k])
	CMPQ R11, DX
	CMOVQLT R11, DX  // DX = bytes to copy
	CMPQ DX, $16
	JB   ceunder16
	LEAQ -16(DX), R11 // the last 16 bytes start here
	XORQ AX, AX

ceblock:
	CMPQ AX, R11
	JAE  celast
	MOVOU (R9)(AX*1), X0
	MOVOU X0, (R10)(AX*1)
	ADDQ $16, AX
	JMP  ceblock

celast:
	MOVOU (R9)(R11*1), X0
	MOVOU X0, (R10)(R11*1)
	JMP  cenext

ceunder16:
	CMPQ DX, $8
	JB   ceunder8
	MOVQ (R9), AX
	MOVQ -8(R9)(DX*1), BX
	MOVQ AX, (R10)
	MOVQ BX, -8(R10)(DX*1)
	JMP  cenext

ceunder8:
	CMPQ DX, $4
	JB   ceunder4
	MOVL (R9), AX
	MOVL -4(R9)(DX*1), BX
	MOVL AX, (R10)
	MOVL BX, -4(R10)(DX*1)
	JMP  cenext

ceunder4:
	CMPQ DX, $2
	JB   ceunder2
	MOVW (R9), AX
	MOVW -2(R9)(DX*1), BX
	MOVW AX, (R10)
	MOVW BX, -2(R10)(DX*1)
	JMP  cenext

ceunder2:
	TESTQ DX, DX
	JZ   cenext
	MOVB (R9), AX
	MOVB AX, (R10)

cenext:
	ADDQ $24, SI
	ADDQ $24, DI
	DECQ CX
	JNZ  celoop

cedone:
	RET

// func copyEachAVX512(dst, src [][]byte)
//
// copyEachAVX512 is copyEachSSE without a branch on the length up to 128
// bytes, which nearly all datagrams are: four 32-byte loads and stores
// under byte masks (AVX-512BW/VL; a masked-off byte is neither read nor
// written, and cannot fault). The lengths of a batch vary from datagram to
// datagram, and copyEachSSE's branches on them were mispredicted about
// once a copy. Longer copies go 32 bytes at a time, then the last 32.
TEXT ·copyEachAVX512(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R8
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	CMPQ R8, CX
	CMOVQLT R8, CX // CX = min(len(dst), len(src))
	TESTQ CX, CX
	JZ   cxdone
	MOVQ $-1, R13
	XORQ R8, R8 // R8 = 0 from here on

cxloop:
	MOVQ 0(SI), R9   // src[k]'s bytes
	MOVQ 8(SI), DX   // len(src[k])
	MOVQ 0(DI), R10  // dst[k]'s bytes
	MOVQ 8(DI), R11  // len(dst[k])
	CMPQ R11, DX
	CMOVQLT R11, DX  // DX = bytes to copy
	CMPQ DX, $128
	JA   cxlong
	// Bytes 0..63 under K1 (low half) and K2, 64..127 under K3 and K4.
	BZHIQ DX, R13, AX // the low DX bits (all 64 when DX >= 64)
	LEAQ -64(DX), R12
	CMPQ R12, $0
	CMOVQLT R8, R12   // max(DX-64, 0)
	BZHIQ R12, R13, BX
	KMOVQ AX, K1
	KSHIFTRQ $32, K1, K2
	KMOVQ BX, K3
	KSHIFTRQ $32, K3, K4
	VMOVDQU8.Z (R9), K1, Y0
	VMOVDQU8.Z 32(R9), K2, Y1
	VMOVDQU8.Z 64(R9), K3, Y2
	VMOVDQU8.Z 96(R9), K4, Y3
	VMOVDQU8 Y0, K1, (R10)
	VMOVDQU8 Y1, K2, 32(R10)
	VMOVDQU8 Y2, K3, 64(R10)
	VMOVDQU8 Y3, K4, 96(R10)
	JMP  cxnext

cxlong:
	LEAQ -32(DX), R11 // the last 32 bytes start here
	XORQ AX, AX

cxblock:
	CMPQ AX, R11
	JAE  cxlast
	VMOVDQU (R9)(AX*1), Y0
	VMOVDQU Y0, (R10)(AX*1)
	ADDQ $32, AX
	JMP  cxblock

cxlast:
	VMOVDQU (R9)(R11*1), Y0
	VMOVDQU Y0, (R10)(R11*1)

cxnext:
	ADDQ $24, SI
	ADDQ $24, DI
	DECQ CX
	JNZ  cxloop
	VZEROUPPER

cxdone:
	RET
