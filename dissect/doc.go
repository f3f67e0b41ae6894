// Package dissect is bcwire's wire codec for the Star Trek: Bridge Commander
// 1.1 multiplayer protocol: the AlbyRules datagram cipher, the TGBufferStream
// primitives (little-endian integers, packed bits, compressed floats and
// vectors), transport framing (datagrams and the typed transport messages
// inside them) and GameSpy's plaintext queries.
//
// Every structure both decodes and encodes, so the dissector, the capture
// generator and the bundled server share one codec. Decoders never panic:
// short or odd input gives an *Error carrying the byte offset where decoding
// stopped. The per-datagram path reuses caller-owned storage and allocates
// nothing in steady state.
//
// Game opcodes (the payloads of type 0x32 messages) are decoded by the
// sub-package game.
package dissect
