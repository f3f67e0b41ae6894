package measure

// table maps uniform 64-bit keys to values: open addressing with linear
// probing on the key's low bits. The relay matrix keys it by payload hash,
// the lanes by a mixed flow, ship and direction (shipKey); a Go map would
// hash the keys again, and its work was half the measures' time on
// OpenBC's battle, where every client message is relayed.
type table[V any] struct {
	slots []slot[V] // a power of two long, at most half full
	n     int
}

type slot[V any] struct {
	key uint64
	v   *V // nil: empty
}

const minTableSlots = 64

// find is the index of key's slot, or of the empty slot where it goes.
func (t *table[V]) find(key uint64) int {
	if t.slots == nil {
		t.slots = make([]slot[V], minTableSlots)
	}
	mask := len(t.slots) - 1
	for i := int(key) & mask; ; i = (i + 1) & mask {
		if s := &t.slots[i]; s.v == nil || s.key == key {
			return i
		}
	}
}

// insert puts key in the empty slot i that find gave.
func (t *table[V]) insert(i int, key uint64, v *V) {
	t.slots[i] = slot[V]{key, v}
	t.n++
	if 2*t.n > len(t.slots) {
		old := t.slots
		t.slots = make([]slot[V], 2*len(old))
		for _, s := range old {
			if s.v != nil {
				t.slots[t.find(s.key)] = s
			}
		}
	}
}

// remove empties slot i, moving back the entries after it that it would
// otherwise cut off from their home slot (backward-shift deletion).
func (t *table[V]) remove(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].v != nil; j = (j + 1) & mask {
		home := int(t.slots[j].key) & mask
		if (j-home)&mask >= (j-i)&mask { // i lies on j's probe path
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot[V]{}
	t.n--
}
