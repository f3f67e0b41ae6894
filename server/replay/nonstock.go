package replay

// A capture of a server in progress (or of its test clients) holds
// non-stock messages: intact bytes not in stock's form, which the
// dissector's registry names (dissect.Forms). They are replayed as
// captured, like any other message; a replay says the capture has them,
// and never calls it damaged for them (damage.go is for broken captures).

import (
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/dissect"
)

// NonStockKind is one registry form's count in a capture.
type NonStockKind struct {
	Name     string `json:"name"`
	Count    int    `json:"count"`
	Evidence string `json:"evidence"`
}

// NonStockReport is the JSON form of a capture's non-stock messages.
type NonStockReport struct {
	Messages int            `json:"messages"`
	Kinds    []NonStockKind `json:"kinds"`
}

// NonStockReport describes the capture's non-stock messages; nil when
// there are none.
func (c *Capture) NonStockReport() *NonStockReport {
	r := &NonStockReport{}
	for f, n := range c.NonStock {
		if n > 0 {
			r.Messages += n
			r.Kinds = append(r.Kinds, NonStockKind{Name: dissect.Forms[f].Name, Count: n, Evidence: dissect.Forms[f].Evidence})
		}
	}
	if r.Messages == 0 {
		return nil
	}
	return r
}

// NonStockSummary is one line naming the capture's non-stock messages by
// kind, or "" when there are none.
func (c *Capture) NonStockSummary() string {
	r := c.NonStockReport()
	if r == nil {
		return ""
	}
	kinds := make([]string, len(r.Kinds))
	for i, k := range r.Kinds {
		kinds[i] = fmt.Sprintf("%s %d", k.Name, k.Count)
	}
	return fmt.Sprintf("%s: %d non-stock messages (intact, not in stock's form; not damage): %s\n",
		c.Name, r.Messages, strings.Join(kinds, ", "))
}
