// Package live captures link-layer frames from a network interface as they
// arrive, without cgo or libpcap, and feeds them to the same pipeline that
// decodes capture files: Source turns frames into capture.Packets through a
// capture.Decoder and is a flow.Source, so flow.Run drives it exactly as it
// drives a *capture.Reader.
//
// Capture uses a Linux AF_PACKET socket (see Open) that reads frames from a
// TPACKET_V3 memory-mapped ring, a block of frames per wake-up, or with one
// recvmsg per frame where the kernel has no ring; other systems get a clear
// error. A kernel socket filter (compiled by package pcapfilter) keeps
// unwanted traffic in the kernel.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/pcapfilter"
	"github.com/google/gopacket"
)

// Error classes, for errors.Is.
var (
	ErrPermission    = errors.New("live: permission denied")
	ErrNoInterface   = errors.New("live: no such interface")
	ErrInterfaceDown = errors.New("live: interface is down")
	ErrUnsupported   = errors.New("live: live capture is not supported here")
)

// Error is a failure to open or read an interface, worded for people.
type Error struct {
	Kind  error // one of the Err* classes, or nil
	Iface string
	Msg   string
	Err   error // the underlying system error, if any
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the class and the system error.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

// classify turns a system error from step op on iface into an *Error that
// says what to do about it.
func classify(op, iface string, err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return &Error{Iface: iface, Msg: fmt.Sprintf("%s on %s: %v", op, iface, err), Err: err}
	}
	switch errno {
	case syscall.EPERM, syscall.EACCES:
		return &Error{Kind: ErrPermission, Iface: iface, Err: err, Msg: fmt.Sprintf(
			"capturing on %s needs the CAP_NET_RAW capability (%s: %v): run as root, or grant it once with: sudo setcap cap_net_raw+ep $(command -v bcwire)",
			iface, op, errno)}
	case syscall.ENODEV, syscall.ENXIO:
		return noInterface(iface, err)
	case syscall.ENETDOWN:
		return down(iface, err)
	case syscall.EAFNOSUPPORT, syscall.EPROTONOSUPPORT:
		return &Error{Kind: ErrUnsupported, Iface: iface, Err: err,
			Msg: fmt.Sprintf("%s on %s: this kernel has no packet sockets (AF_PACKET): %v", op, iface, errno)}
	}
	return &Error{Iface: iface, Err: err, Msg: fmt.Sprintf("%s on %s: %v", op, iface, errno)}
}

func noInterface(iface string, err error) error {
	return &Error{Kind: ErrNoInterface, Iface: iface, Err: err,
		Msg: fmt.Sprintf("no such interface %s (available: %s)", iface, available())}
}

func down(iface string, err error) error {
	return &Error{Kind: ErrInterfaceDown, Iface: iface, Err: err,
		Msg: fmt.Sprintf("interface %s is down: bring it up first (ip link set %s up)", iface, iface)}
}

// available lists the interfaces of this system, for error messages.
func available() string {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		return "none found"
	}
	names := make([]string, 0, len(ifs))
	for _, i := range ifs {
		n := i.Name
		if i.Flags&net.FlagUp == 0 {
			n += " (down)"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Options tune Open.
type Options struct {
	// Snaplen is the most bytes kept of each frame (default 262144).
	Snaplen int
	// Filter is the kernel filter; nil captures everything.
	Filter *pcapfilter.Expr
	// Promiscuous also captures frames not addressed to this host.
	Promiscuous bool
	// BufferSize is the socket receive buffer in bytes (default 8 MiB):
	// bigger absorbs longer bursts before the kernel drops frames.
	BufferSize int
	// Poll is how long ReadFrame waits before giving control back
	// (default 100 ms); it bounds how late a cancel or a tick is noticed.
	Poll time.Duration
	// NoRing reads each frame with its own recvmsg instead of from a
	// TPACKET_V3 memory-mapped ring (the fallback Open takes by itself
	// where the kernel has no such ring).
	NoRing bool
}

// KernelStats are the socket's counts since it was opened.
type KernelStats struct {
	Packets uint64 // frames that passed the filter, Drops included (one copy on loopback: see Program)
	Drops   uint64 // frames the kernel dropped because the buffer was full
}

// ErrTimeout is returned by ReadFrame when Poll passed without a frame.
var ErrTimeout = errors.New("live: no frame within the poll interval")

// Source reads frames from a Handle, passes each to OnFrame (for writing a
// capture file), decodes it with a capture.Decoder and hands out UDP
// datagrams. It implements flow.Source.
//
// The capture stops when Ctx is done, when MaxFrames frames were read, when
// reading fails or when OnFrame fails. Whatever the reason, Next then cuts
// the capture (Handle.Cut) and goes on returning the datagrams of every
// frame the kernel had passed until then, the end of the last ring block
// included, before it returns io.EOF (or the error that stopped it). Kernel
// and the counters below then account for every frame the kernel passed.
type Source struct {
	H   *Handle
	Ctx context.Context
	// MaxFrames stops the capture after this many frames (0 = no limit);
	// frames the kernel passed after them are read and not kept (Beyond).
	MaxFrames int
	// OnFrame sees every captured frame before it is decoded; after an
	// error it sees no more (they are counted by Unwritten), the capture
	// stops, and Next returns the error once the rest is decoded.
	OnFrame func(frame []byte, ci gopacket.CaptureInfo) error
	// Tick is called after every frame and every idle poll interval, for
	// periodic work (statistics lines, flushing).
	Tick func(now time.Time)
	// Capture tunes the decoder: checksum verification, reassembly caps.
	Capture capture.Options

	dec        *capture.Decoder
	frames     int
	beyond     int
	unwritten  int
	undecoded  int
	stopped    bool
	kernel     KernelStats
	readErr    error // the read failure that stopped the capture
	onFrameErr error
}

// Frames is the number of frames read and kept so far (at most MaxFrames).
func (s *Source) Frames() int { return s.frames }

// Beyond is the number of frames the kernel passed after the MaxFrames-th,
// before the capture was cut: read, and neither written nor decoded.
func (s *Source) Beyond() int { return s.beyond }

// Unwritten is the number of kept frames OnFrame did not take: the one it
// failed on and all after it.
func (s *Source) Unwritten() int { return s.unwritten }

// Undecoded is the number of kept frames Finish handed to OnFrame without
// decoding them (the consumer had stopped reading).
func (s *Source) Undecoded() int { return s.undecoded }

// Kernel is the kernel's final count, once the capture was cut (zero
// before).
func (s *Source) Kernel() KernelStats { return s.kernel }

// Lost is the number of frames the kernel passed (or dropped) that the
// capture did not read: the kernel's drops, and frames the drain gave up
// waiting for. 0 before the cut.
func (s *Source) Lost() uint64 {
	if !s.stopped {
		return 0
	}
	read := uint64(s.frames + s.beyond)
	return s.kernel.Packets - min(read, s.kernel.Packets)
}

// stop cuts the capture once.
func (s *Source) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	st, err := s.H.Cut()
	s.kernel = st
	if err != nil && s.readErr == nil {
		s.readErr = err
	}
}

// end is what Next returns after the last frame.
func (s *Source) end() error {
	switch {
	case s.readErr != nil:
		return s.readErr
	case s.onFrameErr != nil:
		return s.onFrameErr
	}
	return io.EOF
}

// take counts one frame read and passes it to OnFrame; keep is false for a
// frame past MaxFrames.
func (s *Source) take(frame []byte, ci gopacket.CaptureInfo) (keep bool) {
	if s.MaxFrames > 0 && s.frames >= s.MaxFrames {
		s.beyond++
		return false
	}
	s.frames++
	if s.MaxFrames > 0 && s.frames == s.MaxFrames {
		s.stop() // as early as can be: fewer frames to read and throw away
	}
	if s.OnFrame != nil {
		if s.onFrameErr != nil {
			s.unwritten++
		} else if err := s.OnFrame(frame, ci); err != nil {
			s.onFrameErr = err
			s.unwritten++
			s.stop()
		}
	}
	return true
}

// Next returns the next UDP datagram (see flow.Source).
func (s *Source) Next() (*capture.Packet, error) {
	if s.dec == nil {
		s.dec = capture.NewDecoder(s.Capture)
	}
	for {
		if !s.stopped && s.MaxFrames > 0 && s.frames >= s.MaxFrames {
			s.stop()
		}
		frame, ci, err := s.H.ReadFrame(s.Ctx)
		if s.Tick != nil {
			s.Tick(time.Now())
		}
		switch {
		case errors.Is(err, ErrTimeout):
			continue
		case err != nil && s.stopped:
			return nil, s.end() // every frame passed before the cut was read
		case err != nil:
			if s.Ctx == nil || s.Ctx.Err() == nil {
				s.readErr = err
			}
			s.stop()
			continue
		}
		if !s.take(frame, ci) {
			continue
		}
		p, err := s.dec.Decode(s.H.LinkType(), frame, ci)
		if p == nil && err == nil {
			continue // not a UDP/IPv4 datagram, or a fragment held for reassembly
		}
		return p, err
	}
}

// Finish ends the capture when its consumer stopped calling Next early:
// the capture is cut, and the frames the kernel passed until then are
// still read and handed to OnFrame (counted by Undecoded, not decoded).
// After Next returned its last frame, Finish does nothing.
func (s *Source) Finish() {
	s.stop()
	for {
		frame, ci, err := s.H.ReadFrame(context.Background()) // after the cut the context no longer matters
		if err != nil {
			return
		}
		if s.take(frame, ci) {
			s.undecoded++
		}
	}
}

// Buffered is the number of frames already in memory (see flow.Run, which
// then reads them together and decrypts them in a batch).
func (s *Source) Buffered() int { return s.H.Pending() }

// Stats returns the decoder's counts (see flow.Source).
func (s *Source) Stats() capture.Stats {
	if s.dec == nil {
		return capture.Stats{}
	}
	return s.dec.Stats()
}

// Incomplete reports IPv4 fragment sets never completed (see flow.Source).
func (s *Source) Incomplete() []capture.FragmentSetInfo {
	if s.dec == nil {
		return nil
	}
	return s.dec.Flush()
}
