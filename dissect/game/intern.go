package game

// internTable turns the byte strings of decoded messages (player and set
// names, chat lines, file names) into Go strings, handing out the same
// string for the same bytes: a name or chat line seen before costs no
// allocation. Looking up with m[string(b)] does not allocate either.
//
// The table is bounded: it keeps at most maxInterned strings of at most
// maxInternLen bytes, forgetting the oldest first, so hostile input with
// endless distinct strings holds it at a fixed size (longer strings are
// simply not kept).
type internTable struct {
	m     map[string]string
	order []string // insertion ring, for eviction
	next  int      // the oldest entry once the ring is full
}

const (
	maxInterned  = 256
	maxInternLen = 256
)

// str returns b as a string.
func (t *internTable) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxInternLen {
		return string(b)
	}
	if s, ok := t.m[string(b)]; ok {
		return s
	}
	s := string(b)
	if t.m == nil {
		t.m = make(map[string]string)
	}
	if len(t.order) < maxInterned {
		t.order = append(t.order, s)
	} else {
		delete(t.m, t.order[t.next])
		t.order[t.next] = s
		t.next = (t.next + 1) % maxInterned
	}
	t.m[s] = s
	return s
}

// str returns b as a string, through the Decoder's intern table when the
// context has one.
func (c *Context) str(b []byte) string {
	if c == nil || c.strs == nil {
		return string(b)
	}
	return c.strs.str(b)
}
