package game

// CopyTo makes dst a copy of m that shares nothing the decoder reuses or
// that aliases the decoded bytes: dst stays as it is after m's Decoder
// decodes the next message and the input buffer is overwritten (decode
// formats a batch of records on other goroutines meanwhile). What dst
// still shares is read-only: ship class specs and names, and the states'
// JSON forms (subsystemForms, never changed once made). dst's own
// storage is reused, so that copying allocates nothing in steady state.
func (m *StateUpdate) CopyTo(dst *StateUpdate) {
	subs, weapons, buf := dst.Subsystems[:0], dst.Weapons[:0], dst.childBuf[:0]
	*dst = *m
	if m.Subsystems != nil {
		dst.Subsystems = append(subs, m.Subsystems...)
	}
	if m.Weapons != nil {
		dst.Weapons = append(weapons, m.Weapons...)
	}
	dst.ownBytes(buf)
}

// MoveTo makes dst what CopyTo would, but hands dst m's subsystem and
// weapon lists instead of copying them, and gives m dst's in exchange:
// the lists' storage changes hands, and only the bytes that alias the
// decoded message are copied. m is left unfit to read (its lists are
// dst's old ones, emptied) until its Decoder decodes into it again, which
// resets every field; a caller that is done with the record, as decode's
// printer is once it has taken it, saves the copy of the lists. Neither
// allocates in steady state: the storage only moves between the two.
func (m *StateUpdate) MoveTo(dst *StateUpdate) {
	subs, weapons, buf := dst.Subsystems[:0], dst.Weapons[:0], dst.childBuf[:0]
	*dst = *m
	m.Subsystems, m.Weapons = subs, weapons
	dst.ownBytes(buf)
}

// ownBytes copies every byte slice of m that may alias the decoded bytes
// or another StateUpdate's storage (children, facings, extras, the
// undecoded section and its lead bits) into buf and m's own lead array,
// and keeps buf as m's storage. m.Subsystems must be m's own.
func (m *StateUpdate) ownBytes(buf []byte) {
	// Every byte slice is copied into one buffer, sized first: a buffer
	// that grew midway would leave the slices taken before in the old one
	// (valid, but kept alive for nothing).
	n := len(m.SubsystemData)
	for i := range m.Subsystems {
		s := &m.Subsystems[i]
		n += len(s.Children) + len(s.Facings) + len(s.Extra)
	}
	if buf == nil || cap(buf) < n {
		buf = make([]byte, 0, max(n, 64))
	}
	own := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	m.SubsystemData = own(m.SubsystemData)
	for i := range m.Subsystems {
		s := &m.Subsystems[i]
		s.Children, s.Facings, s.Extra = own(s.Children), own(s.Facings), own(s.Extra)
	}
	switch lead := m.SubsystemLeadBits; {
	case lead == nil:
	case len(lead) <= len(m.leadBuf):
		// A decoded message's lead bits are in its source's leadBuf.
		m.SubsystemLeadBits = m.leadBuf[:copy(m.leadBuf[:], lead)]
	default:
		m.SubsystemLeadBits = append([]bool(nil), lead...)
	}
	// childBuf was the source's backing array of children; m's children
	// are in buf now, which becomes m's storage.
	m.childBuf = buf[:0]
}
