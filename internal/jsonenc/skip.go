package jsonenc

// SkipValue returns the end of the compact JSON value that starts at
// obj[i]: a string, an array or object (to its closing bracket), or a
// literal (to the next comma or closing bracket).
func SkipValue(obj []byte, i int) int {
	depth := 0
	for ; i < len(obj); i++ {
		switch obj[i] {
		case '"':
			for i++; i < len(obj) && obj[i] != '"'; i++ {
				if obj[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
