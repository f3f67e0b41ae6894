// Package input opens the captures bcwire's commands read and holds the
// flags that choose them and say how to read them: -r, -Y, -t, -c,
// --server, --checksums, the memory caps and --workers, with FilesRunE,
// the RunE of the commands that take capture files; and the other inputs
// a command is given (a pasted datagram in hex, a capture to replay).
package input

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/spf13/pflag"
)

// ParseHex reads hex as people paste it from logs and dumps: spaces, colons,
// commas, dashes, newlines and 0x prefixes are ignored, case does not
// matter.
func ParseHex(s string) ([]byte, error) {
	s = strings.ReplaceAll(s, "0x", "")
	s = strings.ReplaceAll(s, "0X", "")
	clean := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r', ':', ',', '-', '_':
			return -1
		}
		return r
	}, s)
	if clean == "" {
		return nil, fmt.Errorf("no hex digits given")
	}
	if len(clean)%2 == 1 {
		return nil, fmt.Errorf("odd number of hex digits (%d)", len(clean))
	}
	b, err := hex.DecodeString(clean)
	if err != nil {
		var ie hex.InvalidByteError
		if e, ok := err.(hex.InvalidByteError); ok {
			ie = e
			return nil, fmt.Errorf("%q is not a hex digit", rune(ie))
		}
		return nil, err
	}
	return b, nil
}

// AddServerFlag registers --server, which means the same in every command
// that reads captures: the captured server(s) to look at.
func AddServerFlag(f *pflag.FlagSet, servers *[]string) {
	f.StringSliceVar(servers, "server", nil, "look only at the captured server `HOST:PORT` (repeatable), found on any port (default: every server found)")
}

// ParseServers reads --server values: HOST:PORT with a numeric address.
func ParseServers(list []string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, s := range list {
		ap, err := ParseServer(s)
		if err != nil {
			return nil, err
		}
		out = append(out, ap)
	}
	return out, nil
}

// ParseServer reads one --server value.
func ParseServer(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return ap, exit.Usage("--server %q: want HOST:PORT with a numeric IPv4 address, e.g. 10.0.0.1:22101", s)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// AddCountFlag registers -c, --count: read only the first N packets, as
// tshark's -c, in every command that reads captures.
func AddCountFlag(f *pflag.FlagSet, n *int) {
	f.IntVarP(n, "count", "c", 0, "read only the first `N` packets (of all the files together)")
}

// CheckCount refuses a negative -c.
func CheckCount(n int) error {
	if n < 0 {
		return exit.Usage("-c %d: give the number of packets to read (0 for all)", n)
	}
	return nil
}

// CheckInputs refuses, before anything is read or written, an input that
// is missing or a directory: a run that would fail on its second file then
// prints nothing of its first.
func CheckInputs(files []string) error {
	for _, f := range files {
		if err := CheckCapturePath(f); err != nil {
			return err
		}
	}
	return nil
}
