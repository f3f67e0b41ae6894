package capture

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

// A live capture names the interface it was taken on; a generated one
// keeps bcwire0.
func TestWriterNamesInterface(t *testing.T) {
	for _, c := range []struct{ name, want string }{{"eth0", "eth0"}, {"", ""}, {"bcwire0", "bcwire0"}} {
		var buf bytes.Buffer
		w, err := NewWriterInterface(&buf, PCAPNG, Ethernet, c.name)
		if err != nil {
			t.Fatal(err)
		}
		w.WriteUDP(time.Unix(1, 0), netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"), []byte{1})
		w.Flush()
		rd, err := NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
		info, ok := rd.Interface(0)
		if !ok || info.Name != c.want || info.LinkType != Ethernet {
			t.Errorf("%q: interface %+v %v", c.name, info, ok)
		}
	}
}
