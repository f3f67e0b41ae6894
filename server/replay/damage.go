package replay

import (
	"fmt"
	"net/netip"
	"strings"
)

// A replay of a damaged capture plays what could be read; the damage is
// reported, never passed over: at the start (DamageSummary), in the JSON
// reports (DamageReport), and in the exit status (Capture.DamageAffects),
// as the decoding commands do.

// DamagedRecord is one damaged record of a capture.
type DamagedRecord struct {
	Frame int    `json:"frame"`
	Src   string `json:"src,omitempty"` // empty for an unreadable capture record
	Dst   string `json:"dst,omitempty"`
	Error string `json:"error"`

	server, client netip.AddrPort
}

// DamageReport is the JSON form of a capture's damage.
type DamageReport struct {
	Records int `json:"records"` // damaged records in all
	// Unreadable are capture records that could not be read (truncated,
	// absurd length, bad IP header); Datagrams are datagrams or messages
	// that do not parse or decode.
	Unreadable int `json:"unreadable"`
	Datagrams  int `json:"datagrams"`
	// Sessions are the 1-based sessions whose own traffic holds damage.
	Sessions []int           `json:"sessions,omitempty"`
	First    []DamagedRecord `json:"first"` // the first few, in capture order
}

// firstDamage is how many damaged records a summary names.
const firstDamage = 5

// KeptDamage is how many damaged records a Capture keeps in detail
// (Capture.Damage); the rest are counted (Capture.DamageCount). A header
// followed by 100 MB of zeros made six million of them, 1.2 GB.
const KeptDamage = 100

// maxDamagedFlows caps the client endpoints whose damage is counted
// before their session is known; damage past it is counted as belonging
// to no known session (which DamageAffects takes as touching every one).
const maxDamagedFlows = 4096

// damageTally counts damage while a capture is read.
type damageTally struct {
	byFlow       map[flowKey]int
	unattributed int
}

type flowKey struct{ server, client netip.AddrPort }

// add records one damaged record, keeping its detail while there is room.
func (c *Capture) addDamage(t *damageTally, d DamagedRecord) {
	c.DamageCount++
	if len(c.Damage) < KeptDamage {
		c.Damage = append(c.Damage, d)
	}
	if !d.client.IsValid() {
		return
	}
	k := flowKey{d.server, d.client}
	if _, ok := t.byFlow[k]; ok || len(t.byFlow) < maxDamagedFlows {
		t.byFlow[k]++
	} else {
		t.unattributed++
	}
}

// attributeDamage counts each session's damaged records.
func (c *Capture) attributeDamage(t *damageTally) {
	for _, s := range c.Sessions {
		s.Damaged = t.byFlow[flowKey{s.Server, s.Client}]
	}
	c.unattributed = t.unattributed
}

// DamageReport describes the capture's damage; nil when there is none.
func (c *Capture) DamageReport() *DamageReport {
	if c.DamageCount == 0 {
		return nil
	}
	r := &DamageReport{Records: c.DamageCount, Unreadable: c.Damaged, Datagrams: c.DamageCount - c.Damaged}
	for _, s := range c.Sessions {
		if s.Damaged > 0 {
			r.Sessions = append(r.Sessions, s.Index+1)
		}
	}
	r.First = c.Damage[:min(len(c.Damage), firstDamage)]
	return r
}

// DamageSummary is a few lines naming the capture's damage (counts and the
// first damaged frames), or "" when there is none.
func (c *Capture) DamageSummary() string {
	r := c.DamageReport()
	if r == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: DAMAGED capture: %d damaged records (%d unreadable capture records, %d datagrams or messages that do not parse)",
		c.Name, r.Records, r.Unreadable, r.Datagrams)
	if len(r.Sessions) > 0 {
		fmt.Fprintf(&b, "; in sessions %s", joinInts(r.Sessions))
	}
	b.WriteString("; the replay plays what could be read\n")
	for _, d := range r.First {
		if d.Src != "" {
			fmt.Fprintf(&b, "  frame %d %s -> %s: %s\n", d.Frame, d.Src, d.Dst, d.Error)
		} else {
			fmt.Fprintf(&b, "  unreadable record: %s\n", d.Error)
		}
	}
	if more := r.Records - len(r.First); more > 0 {
		fmt.Fprintf(&b, "  ... and %d more\n", more)
	}
	if c.GaveUp != "" {
		fmt.Fprintf(&b, "  %s\n", c.GaveUp)
	}
	return b.String()
}

// DamageAffects reports whether the damage touches a replay that played
// the first played sessions (in join order): damage in one of them, or an
// unreadable capture record, which belongs to no known session and may
// have held any session's datagram.
func (c *Capture) DamageAffects(played int) bool {
	if played <= 0 {
		return false
	}
	if c.Damaged > 0 || c.unattributed > 0 {
		return true
	}
	for _, s := range c.Sessions[:min(played, len(c.Sessions))] {
		if s.Damaged > 0 {
			return true
		}
	}
	return false
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
