package session

import "iter"

// Open yields the sessions open now, in the order they opened, for
// periodic views such as metrics (players per server). The sessions are
// still being built: read them between two calls of Add, and keep nothing.
func (b *Builder) Open() iter.Seq[*Session] {
	return func(yield func(*Session) bool) {
		for _, l := range b.opened[b.head:] {
			if l != nil && !l.closed && !yield(l.s) {
				return
			}
		}
	}
}
