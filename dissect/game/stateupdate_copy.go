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
	dst.SubsystemData = own(m.SubsystemData)
	if m.Subsystems != nil {
		dst.Subsystems = append(subs, m.Subsystems...)
		for i := range dst.Subsystems {
			s := &dst.Subsystems[i]
			s.Children, s.Facings, s.Extra = own(s.Children), own(s.Facings), own(s.Extra)
		}
	}
	if m.Weapons != nil {
		dst.Weapons = append(weapons, m.Weapons...)
	}
	switch {
	case m.SubsystemLeadBits == nil:
	case len(m.SubsystemLeadBits) <= len(dst.leadBuf):
		dst.SubsystemLeadBits = dst.leadBuf[:copy(dst.leadBuf[:], m.SubsystemLeadBits)]
	default:
		dst.SubsystemLeadBits = append([]bool(nil), m.SubsystemLeadBits...)
	}
	// childBuf is m's backing array of children; dst's children are in
	// buf now, which becomes dst's storage.
	dst.childBuf = buf[:0]
}
