// Package dissect is bcwire's wire codec for the Star Trek: Bridge Commander
// 1.1 multiplayer protocol: the AlbyRules datagram cipher (with a batch
// form that decrypts many datagrams at once), the TGBufferStream primitives
// (little-endian integers, packed bits, compressed floats and vectors),
// transport framing (datagrams and the typed transport messages inside
// them), the control messages' payloads, fragment reassembly, GameSpy's
// plaintext queries and the master server's TCP list protocol, and the
// registry of known non-stock forms (nonstock.go) that every layer marks
// intact but non-stock messages with.
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
