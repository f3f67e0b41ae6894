//go:build !linux

package replay

import (
	"net"
	"net/netip"
	"time"
)

// Without kernel time stamps a datagram is stamped when it is read.

func stampConn(net.PacketConn) bool { return false }

func readStamped(c net.PacketConn, buf, _ []byte) (int, netip.AddrPort, time.Time, error) {
	n, addr, err := c.ReadFrom(buf)
	var ap netip.AddrPort
	if ua, ok := addr.(*net.UDPAddr); ok {
		ap = ua.AddrPort()
	}
	return n, ap, time.Time{}, err
}
