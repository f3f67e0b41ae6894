//go:build linux

package live

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/pcapfilter"
	"github.com/google/gopacket"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Handle is an open AF_PACKET socket on one interface.
//
// Why not gopacket's pcapgo.EthernetHandle: in gopacket v1.1.19 it does not
// return the packet type from sockaddr_ll (needed to drop the second copy of
// every loopback packet), its recvmsg blocks with no timeout (so a quiet
// capture could not be stopped without leaking a goroutine), its buffer is
// the MTU (cutting 14 bytes off full-size Ethernet frames), and it attaches
// the filter only after binding (so unfiltered frames can slip in first).
// This Handle is the same kind of socket opened with those points handled.
type Handle struct {
	mu       sync.Mutex
	fd       int
	iface    string
	ifindex  int
	loopback bool
	link     capture.LinkType
	flink    pcapfilter.Link
	snaplen  int
	poll     time.Duration
	buf      []byte
	oob      []byte
	stats    KernelStats
	// ring is the TPACKET_V3 ring frames are read from, nil where the
	// kernel has none (or Options.NoRing): then one recvmsg per frame.
	ring *ring
	// received counts the frames taken with recvmsg (returned or
	// skipped); the ring counts its own.
	received uint64

	// After Cut: the kernel passes nothing more, stats holds its final
	// counts, and ReadFrame returns the frames it had passed (target in
	// all, counted from Open) until they are all read or drainBy passes
	// with none coming.
	cut     bool
	target  uint64
	drainBy time.Time
}

const (
	arphrdEther    = 1
	arphrdLoopback = 772
)

// Open opens iface for capture. It needs CAP_NET_RAW. The returned errors
// are *Error values of the classes ErrPermission, ErrNoInterface and
// ErrInterfaceDown where they apply.
func Open(iface string, o Options) (*Handle, error) {
	if o.Snaplen <= 0 {
		o.Snaplen = 262144
	}
	if o.BufferSize <= 0 {
		o.BufferSize = 8 << 20
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	if iface == "" {
		return nil, &Error{Kind: ErrNoInterface, Msg: "no interface given (available: " + available() + ")"}
	}
	ifc, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, noInterface(iface, err)
	}
	if ifc.Flags&net.FlagUp == 0 {
		return nil, down(iface, nil)
	}
	h := &Handle{iface: iface, ifindex: ifc.Index, loopback: ifc.Flags&net.FlagLoopback != 0,
		snaplen: o.Snaplen, poll: o.Poll}

	// Ethernet and loopback devices give Ethernet frames on a SOCK_RAW
	// socket; for any other device the kernel strips its link header
	// (SOCK_DGRAM) and the frames are bare IP packets.
	sockType := unix.SOCK_RAW
	h.link, h.flink = capture.Ethernet, pcapfilter.Ethernet
	if t := hwType(iface); t != arphrdEther && t != arphrdLoopback {
		sockType = unix.SOCK_DGRAM
		h.link, h.flink = capture.Raw, pcapfilter.RawIP
	}
	// Protocol 0: the socket receives nothing until bind names a protocol,
	// so the filter is in place before the first frame.
	fd, err := unix.Socket(unix.AF_PACKET, sockType|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, classify("opening a packet socket", iface, err)
	}
	h.fd = fd
	if err := h.SetFilter(o.Filter); err != nil {
		h.Close()
		return nil, err
	}
	// Bigger buffers absorb bursts; SO_RCVBUFFORCE passes the sysctl cap
	// when we have CAP_NET_ADMIN, SO_RCVBUF is the fallback.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, o.BufferSize) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, o.BufferSize)
	}
	// The ring takes the place of the receive buffer; without one, frames
	// are read with recvmsg into buf (and a timestamp into oob).
	if !o.NoRing {
		if r, err := setupRing(fd, o.BufferSize, o.Poll); err == nil {
			h.ring = r
		} else {
			_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V1)
		}
	}
	if h.ring == nil {
		h.buf, h.oob = make([]byte, o.Snaplen), make([]byte, 256)
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.Index}); err != nil {
		h.Close()
		return nil, classify("binding to the interface", iface, err)
	}
	if o.Promiscuous {
		mreq := unix.PacketMreq{Ifindex: int32(ifc.Index), Type: unix.PACKET_MR_PROMISC}
		if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
			h.Close()
			return nil, classify("enabling promiscuous mode", iface, err)
		}
	}
	return h, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// hwType reads the device's ARPHRD_ type from sysfs (-1 if unknown, which
// is treated as Ethernet-like when the device has a 6-byte address).
func hwType(iface string) int {
	if strings.ContainsAny(iface, "/.") {
		return -1
	}
	b, err := os.ReadFile("/sys/class/net/" + iface + "/type")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	if ifc, err := net.InterfaceByName(iface); err == nil {
		if ifc.Flags&net.FlagLoopback != 0 {
			return arphrdLoopback
		}
		if len(ifc.HardwareAddr) == 6 {
			return arphrdEther
		}
	}
	return -1
}

// LinkType is the link layer of the frames ReadFrame returns.
func (h *Handle) LinkType() capture.LinkType { return h.link }

// Loopback reports whether the interface is a loopback device.
func (h *Handle) Loopback() bool { return h.loopback }

// Program compiles e into the program SetFilter would install (nil e: all
// frames). On a loopback device it starts with a test of the packet type
// that drops the outgoing copy of every packet: the loopback device shows
// each packet twice, once leaving and once arriving (libpcap drops the same
// copy).
func (h *Handle) Program(e *pcapfilter.Expr) ([]bpf.Instruction, error) {
	if e == nil {
		e = pcapfilter.Accept()
	}
	prog, err := e.Compile(h.flink, uint32(h.snaplen))
	if err != nil {
		return nil, err
	}
	if h.loopback {
		prog = append([]bpf.Instruction{
			bpf.LoadExtension{Num: bpf.ExtType},
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: unix.PACKET_OUTGOING, SkipTrue: 1},
			bpf.RetConstant{Val: 0},
		}, prog...)
	}
	return prog, nil
}

// SetFilter installs the kernel filter for e (nil: all frames), replacing
// the previous one. It can be called while capturing.
func (h *Handle) SetFilter(e *pcapfilter.Expr) error {
	if h.cut {
		return nil // the capture is over: the reject-all filter stays
	}
	prog, err := h.Program(e)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.attach(prog)
}

// attach installs prog as the socket's filter; h.mu is held.
func (h *Handle) attach(prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	if h.fd < 0 {
		return errors.New("live: handle closed")
	}
	if err := unix.SetsockoptSockFprog(h.fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
		&unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}); err != nil {
		return classify("installing the kernel filter", h.iface, err)
	}
	return nil
}

// ReadFrame waits up to the poll interval for one frame. It returns
// ErrTimeout when none came, ctx.Err() once ctx is done. The frame is valid
// until the next call. ci.Length is the frame's length on the wire,
// ci.CaptureLength what was kept (at most the snap length).
//
// After Cut, ctx no longer matters: ReadFrame returns the frames the kernel
// passed before the cut, then io.EOF.
func (h *Handle) ReadFrame(ctx context.Context) ([]byte, gopacket.CaptureInfo, error) {
	if h.cut {
		return h.drainFrame()
	}
	if h.ring != nil {
		return h.readRing(ctx)
	}
	for {
		if ctx != nil && ctx.Err() != nil {
			return nil, gopacket.CaptureInfo{}, ctx.Err()
		}
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(h.poll/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, gopacket.CaptureInfo{}, classify("waiting for packets", h.iface, err)
		}
		if n == 0 {
			return nil, gopacket.CaptureInfo{}, ErrTimeout
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 && fds[0].Revents&unix.POLLIN == 0 {
			// The device went away or down; the pending error says which.
			_, _, _, _, rerr := unix.Recvmsg(h.fd, h.buf, h.oob, unix.MSG_DONTWAIT)
			if rerr == nil {
				rerr = unix.ENETDOWN
			}
			return nil, gopacket.CaptureInfo{}, classify("reading packets", h.iface, rerr)
		}
		length, oobn, _, from, err := unix.Recvmsg(h.fd, h.buf, h.oob, unix.MSG_TRUNC|unix.MSG_DONTWAIT)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, gopacket.CaptureInfo{}, classify("reading packets", h.iface, err)
		}
		if frame, ci, ok := h.received1(length, oobn, from); ok {
			return frame, ci, nil
		}
	}
}

// received1 accounts for one frame read with recvmsg into h.buf and says
// whether to return it.
func (h *Handle) received1(length, oobn int, from unix.Sockaddr) ([]byte, gopacket.CaptureInfo, bool) {
	h.received++
	if sa, ok := from.(*unix.SockaddrLinklayer); ok && h.loopback && sa.Pkttype == unix.PACKET_OUTGOING {
		return nil, gopacket.CaptureInfo{}, false // the kernel filter drops these; this covers frames queued before it was in place
	}
	ci := gopacket.CaptureInfo{Length: length, CaptureLength: min(length, len(h.buf)), InterfaceIndex: h.ifindex}
	ci.Timestamp = timestamp(h.oob[:oobn])
	return h.buf[:ci.CaptureLength], ci, true
}

// readRing is ReadFrame on the TPACKET_V3 ring: frames of the blocks the
// kernel handed over, with a poll only when none is left.
func (h *Handle) readRing(ctx context.Context) ([]byte, gopacket.CaptureInfo, error) {
	for {
		if ctx != nil && ctx.Err() != nil {
			return nil, gopacket.CaptureInfo{}, ctx.Err()
		}
		if frame, ci, ok := h.ring.next(h.ifindex, h.loopback); ok {
			return frame, ci, nil
		}
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(h.poll/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, gopacket.CaptureInfo{}, classify("waiting for packets", h.iface, err)
		}
		if n == 0 {
			return nil, gopacket.CaptureInfo{}, ErrTimeout
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 && fds[0].Revents&unix.POLLIN == 0 {
			// The device went away or down; the pending error says which.
			serr, gerr := unix.GetsockoptInt(h.fd, unix.SOL_SOCKET, unix.SO_ERROR)
			rerr := error(unix.ENETDOWN)
			if gerr == nil && serr != 0 {
				rerr = unix.Errno(serr)
			}
			return nil, gopacket.CaptureInfo{}, classify("reading packets", h.iface, rerr)
		}
	}
}

// Pending is the number of frames ReadFrame can return without waiting
// (those of the ring block in hand; 0 without a ring).
func (h *Handle) Pending() int {
	if h.ring == nil {
		return 0
	}
	return h.ring.pending()
}

// Ring reports whether frames come from a TPACKET_V3 memory-mapped ring
// (false: one recvmsg per frame).
func (h *Handle) Ring() bool { return h.ring != nil }

// timestamp takes the kernel's receive time from the control messages, or
// the current time.
func timestamp(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS &&
				len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
				ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
				return time.Unix(int64(ts.Sec), int64(ts.Nsec)).UTC()
			}
		}
	}
	return time.Now().UTC()
}

// Stats returns the kernel's counts since Open. (The kernel resets its
// counters on every read; the Handle adds them up.)
func (h *Handle) Stats() (KernelStats, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.readStats()
}

// readStats adds the kernel's counts since the last read to h.stats; h.mu
// is held. After Cut the counts are final and the kernel is not asked.
func (h *Handle) readStats() (KernelStats, error) {
	if h.fd < 0 || h.cut {
		return h.stats, nil
	}
	if h.ring != nil {
		st, err := unix.GetsockoptTpacketStatsV3(h.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
		if err != nil {
			return h.stats, classify("reading the kernel's packet statistics", h.iface, err)
		}
		h.stats.Packets += uint64(st.Packets)
		h.stats.Drops += uint64(st.Drops)
		return h.stats, nil
	}
	st, err := unix.GetsockoptTpacketStats(h.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return h.stats, classify("reading the kernel's packet statistics", h.iface, err)
	}
	h.stats.Packets += uint64(st.Packets)
	h.stats.Drops += uint64(st.Drops)
	return h.stats, nil
}

// Close closes the socket and unmaps the ring. It is safe to call more than
// once, but not while ReadFrame runs: the frames it returns live in the ring.
func (h *Handle) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	if h.ring != nil {
		h.ring.close() // after the socket: the kernel writes no more
	}
	return err
}
