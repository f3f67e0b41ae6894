//go:build !linux

package live

import (
	"context"
	"runtime"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/pcapfilter"
	"github.com/google/gopacket"
	"golang.org/x/net/bpf"
)

// Handle is an open capture; only Linux has one.
type Handle struct{}

// Open reports that live capture needs Linux.
func Open(iface string, o Options) (*Handle, error) {
	return nil, &Error{Kind: ErrUnsupported, Iface: iface,
		Msg: "live capture needs Linux (AF_PACKET sockets); on " + runtime.GOOS + " capture with tcpdump -w FILE and run bcwire decode FILE"}
}

func (h *Handle) LinkType() capture.LinkType                            { return capture.Ethernet }
func (h *Handle) Loopback() bool                                        { return false }
func (h *Handle) Program(e *pcapfilter.Expr) ([]bpf.Instruction, error) { return nil, ErrUnsupported }
func (h *Handle) SetFilter(e *pcapfilter.Expr) error                    { return ErrUnsupported }
func (h *Handle) Stats() (KernelStats, error)                           { return KernelStats{}, ErrUnsupported }
func (h *Handle) Cut() (KernelStats, error)                             { return KernelStats{}, ErrUnsupported }
func (h *Handle) Unread() uint64                                        { return 0 }
func (h *Handle) Close() error                                          { return nil }
func (h *Handle) Pending() int                                          { return 0 }
func (h *Handle) Ring() bool                                            { return false }
func (h *Handle) ReadFrame(ctx context.Context) ([]byte, gopacket.CaptureInfo, error) {
	return nil, gopacket.CaptureInfo{}, ErrUnsupported
}
