package report

// AppendHexDump appends data in tshark -x's layout: per 16 bytes, the
// offset in hex, the bytes in hex (a wider gap after the eighth) and the
// bytes as ASCII, '.' for what does not print; then an empty line.
func AppendHexDump(b, data []byte) []byte {
	const digits = "0123456789abcdef"
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		b = append(b, digits[off>>12&15], digits[off>>8&15], digits[off>>4&15], digits[off&15], ' ', ' ')
		for i := range 16 {
			if i == 8 {
				b = append(b, ' ')
			}
			if i < len(line) {
				b = append(b, digits[line[i]>>4], digits[line[i]&15], ' ')
			} else {
				b = append(b, ' ', ' ', ' ')
			}
		}
		b = append(b, ' ', ' ')
		for i, c := range line {
			if i == 8 {
				b = append(b, ' ')
			}
			if c < ' ' || c > '~' {
				c = '.'
			}
			b = append(b, c)
		}
		b = append(b, '\n')
	}
	return append(b, '\n')
}
