package dissect

import (
	"math"
	"strconv"

	"github.com/bcwire/bcwire/internal/jsonenc"
)

// AppendFixed appends f with prec decimals (0 to 3), as
// strconv.AppendFloat(b, float64(f), 'f', prec, 32) does, byte for byte.
// The text forms of decode print every position, direction and speed this
// way, and strconv's general conversion was a third of text decode's time.
//
// A float32's 24-bit mantissa times 10^prec (at most 1000, 10 bits) fits a
// float64's 53 bits, so f * 10^prec is exact and rounding it half to even
// is the correctly rounded decimal strconv prints. Values too large for
// that to fit an integer, and NaN and the infinities, go to strconv.
// FuzzAppendFixedMatchesStrconv holds the two together.
func AppendFixed(b []byte, f float32, prec int) []byte {
	v := float64(f) * pow10[prec&3]
	if !(math.Abs(v) < 1<<53) || prec < 0 || prec > 3 {
		return strconv.AppendFloat(b, float64(f), 'f', prec, 32)
	}
	if math.Signbit(v) { // -0 and values rounding to 0 keep their sign, as in strconv
		b = append(b, '-')
		v = -v
	}
	n := uint64(math.RoundToEven(v))
	// The integer part is small in nearly every value (jsonenc.Uint writes
	// those digit by digit), and each precision divides by a constant,
	// which the compiler turns into a multiplication.
	switch prec {
	case 1:
		return append(append(jsonenc.Uint(b, n/10), '.'), byte('0'+n%10))
	case 2:
		f := n % 100
		return append(append(jsonenc.Uint(b, n/100), '.'), byte('0'+f/10), byte('0'+f%10))
	case 3:
		f := n % 1000
		return append(append(jsonenc.Uint(b, n/1000), '.'), byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
	}
	return jsonenc.Uint(b, n)
}

var pow10 = [4]float64{1, 10, 100, 1000}
