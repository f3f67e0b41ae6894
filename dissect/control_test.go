package dissect

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// oldControlString is Control's String as fmt made it.
func oldControlString(c *Control) string {
	var sb strings.Builder
	sb.WriteString(c.Kind)
	if c.Slot != nil {
		fmt.Fprintf(&sb, " slot=%d", *c.Slot)
	}
	if c.Addr.IsValid() {
		fmt.Fprintf(&sb, " ip=%s", c.Addr)
	}
	if c.Port != 0 {
		fmt.Fprintf(&sb, " port=%d", c.Port)
	}
	if c.Name != "" {
		fmt.Fprintf(&sb, " name=%q", c.Name)
	}
	if len(c.Extra) > 0 {
		fmt.Fprintf(&sb, " data=%X", c.Extra)
	}
	return sb.String()
}

// Control's text is appended directly; it is what fmt wrote, for every
// combination of fields, IPv6 and odd names included.
func TestControlTextMatchesFmt(t *testing.T) {
	slot := uint8(2)
	addrs := []netip.Addr{{}, netip.MustParseAddr("10.0.1.10"), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("::ffff:1.2.3.4"), netip.MustParseAddr("fe80::1%eth0")}
	for i := range 2 * 5 * 2 * 4 * 2 {
		c := Control{Kind: "peer-info"}
		if i&1 != 0 {
			c.Slot = &slot
		}
		c.Addr = addrs[i/2%5]
		if i/10%2 != 0 {
			c.Port = 22101
		}
		c.Name = []string{"", "Cady2", "a\"b\\c", "é\x00"}[i/20%4]
		if i/80%2 != 0 {
			c.Extra = []byte{0, 0xAB, 0x7F}
		}
		if got, want := c.String(), oldControlString(&c); got != want {
			t.Fatalf("%+v: %q, fmt %q", c, got, want)
		}
	}
}
