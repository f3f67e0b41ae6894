// This file builds the UDP/IPv4 frames of the capture formats that hold
// datagrams or game messages without their frames (packet_trace.log,
// OBCTRACE): the sources make the frames, and the Decoder takes them like
// any captured frame.

package capture

import "net/netip"

const (
	udpFrameHeader = 28 // IPv4 (20, no options) + UDP (8)
	frameArenaSize = 128 << 10
)

// frameBuilder hands out frames from an arena. While held (Reader.Hold),
// frames already handed out stay where they are.
type frameBuilder struct {
	arena []byte
	used  int
	held  bool
	ipID  uint16
}

func (s *frameBuilder) hold()    { s.held, s.used = true, 0 }
func (s *frameBuilder) release() { s.held = false }

// frame returns a frame from src to dst with room for n payload bytes
// after its headers, which it has written. Without a hold, the frame
// handed out before is overwritten; while held, a full arena is left to
// the frames handed out and a new one taken.
func (s *frameBuilder) frame(src, dst netip.AddrPort, n int) []byte {
	need := udpFrameHeader + n
	if !s.held {
		s.used = 0
	}
	if s.used+need > len(s.arena) {
		s.arena = make([]byte, max(frameArenaSize, need))
		s.used = 0
	}
	f := s.arena[s.used : s.used+need : s.used+need]
	s.used += need
	s.ipv4UDP(f, src, dst, n)
	return f
}

// ipv4UDP writes the IPv4 and UDP headers of a frame with n payload bytes.
// The UDP checksum is 0 (none computed): the bytes are reconstructed.
func (s *frameBuilder) ipv4UDP(f []byte, src, dst netip.AddrPort, n int) {
	s.ipID++
	total := udpFrameHeader + n
	a, b := src.Addr().As4(), dst.Addr().As4()
	h := f[:20]
	h[0], h[1] = 0x45, 0
	h[2], h[3] = byte(total>>8), byte(total)
	h[4], h[5] = byte(s.ipID>>8), byte(s.ipID)
	h[6], h[7] = 0, 0
	h[8], h[9] = 128, ipProtoUDP
	h[10], h[11] = 0, 0
	copy(h[12:16], a[:])
	copy(h[16:20], b[:])
	c := ipv4Checksum(h)
	h[10], h[11] = byte(c>>8), byte(c)
	u := f[20:28]
	u[0], u[1] = byte(src.Port()>>8), byte(src.Port())
	u[2], u[3] = byte(dst.Port()>>8), byte(dst.Port())
	u[4], u[5] = byte((n+8)>>8), byte(n+8)
	u[6], u[7] = 0, 0
}
