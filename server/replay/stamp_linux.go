package replay

import (
	"net"
	"net/netip"
	"syscall"
	"time"
	"unsafe"
)

// The kernel's receive time of each datagram (SO_TIMESTAMPNS): a client
// busy comparing may read a datagram well after it arrived, and the live
// exchange must carry the time it arrived, as a capture on the wire would,
// or relayed copies would seem to trail their originals by seconds.

// stampConn switches kernel receive time stamps on for c when it is a UDP
// socket; it reports whether they are on.
func stampConn(c net.PacketConn) bool {
	uc, ok := c.(*net.UDPConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return false
	}
	return true
}

// readStamped reads one datagram with its kernel time stamp (zero when
// none came with it).
func readStamped(c net.PacketConn, buf, oob []byte) (int, netip.AddrPort, time.Time, error) {
	uc := c.(*net.UDPConn)
	n, oobn, _, addr, err := uc.ReadMsgUDPAddrPort(buf, oob)
	if err != nil {
		return n, addr, time.Time{}, err
	}
	return n, addr, kernelStamp(oob[:oobn]), nil
}

func kernelStamp(oob []byte) time.Time {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(int64(ts.Sec), int64(ts.Nsec))
		}
	}
	return time.Time{}
}
