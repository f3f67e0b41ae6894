package dissect

import (
	"bytes"
	"fmt"
)

// GameSpy queries and replies share the game's UDP port and travel in clear.
// Both are backslash-separated: a query is `\status\` (a key with no value),
// a reply is `\key\value\key\value...\final\`, usually followed by
// `\queryid\N.M`.

// GameSpyField is one key and value, in wire order.
type GameSpyField struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// GameSpy is a decoded GameSpy datagram.
type GameSpy struct {
	Query   bool           `json:"query"`             // true for a query, false for a reply
	Kind    string         `json:"kind"`              // query kind: basic, status, info, rules, players, ...; "reply" for replies
	QueryID string         `json:"queryid,omitempty"` // the reply's \queryid\ value
	Final   bool           `json:"final,omitempty"`   // the reply ends with \final\
	Fields  []GameSpyField `json:"fields,omitempty"`  // key/value pairs in order (queryid and final excluded)
}

// IsGameSpy reports whether a UDP payload is a GameSpy datagram. Encrypted
// game datagrams never start with a backslash: their byte 0 is a peer id.
func IsGameSpy(b []byte) bool { return len(b) > 0 && b[0] == '\\' }

// ParseGameSpy decodes a GameSpy datagram.
func ParseGameSpy(b []byte) (GameSpy, error) {
	var g GameSpy
	if !IsGameSpy(b) {
		return g, &Error{Offset: 0, What: "gamespy", Err: fmt.Errorf("%w: does not start with a backslash", ErrBadValue)}
	}
	parts := bytes.Split(bytes.TrimSuffix(b[1:], []byte{'\\'}), []byte{'\\'})
	// A query is one or more bare keys: \status\ or \basic\\info\ and the
	// like; a reply alternates key and value.
	if isQuery(parts) {
		g.Query = true
		for _, p := range parts {
			if len(p) > 0 {
				if g.Kind == "" {
					g.Kind = string(p)
				}
				g.Fields = append(g.Fields, GameSpyField{Key: string(p)})
			}
		}
		return g, nil
	}
	g.Kind = "reply"
	for i := 0; i < len(parts); i += 2 {
		k := string(parts[i])
		v := ""
		if i+1 < len(parts) {
			v = string(parts[i+1])
		}
		switch k {
		case "final":
			g.Final = true
			continue
		case "queryid":
			g.QueryID = v
			continue
		}
		g.Fields = append(g.Fields, GameSpyField{Key: k, Value: v})
	}
	if len(parts)%2 == 1 && !g.Final {
		return g, &Error{Offset: len(b), What: "gamespy reply", Err: fmt.Errorf("%w: key without a value", ErrShort)}
	}
	return g, nil
}

// knownQueries are the query words the stock server answers.
var knownQueries = map[string]bool{"basic": true, "status": true, "info": true, "rules": true, "players": true, "echo": true, "secure": true}

func isQuery(parts [][]byte) bool {
	for _, p := range parts {
		if len(p) > 0 && !knownQueries[string(p)] {
			return false
		}
	}
	return true
}

// Append encodes g. A reply ends with \final\ (when Final) and then
// \queryid\ (when set, with no backslash after its value), the order of
// stock replies.
func (g *GameSpy) Append(b []byte) []byte {
	if g.Query {
		for _, f := range g.Fields {
			b = append(append(append(b, '\\'), f.Key...), '\\')
		}
		return b
	}
	start := len(b)
	for _, f := range g.Fields {
		b = append(append(append(b, '\\'), f.Key...), '\\')
		b = append(b, f.Value...)
	}
	if g.Final {
		b = append(b, `\final\`...)
	}
	switch {
	case g.QueryID != "":
		b = append(append(b, `\queryid\`...), g.QueryID...)
	case g.Final:
	case len(g.Fields) > 0 && g.Fields[len(g.Fields)-1].Value == "":
		// A trailing empty value needs its closing backslash, or the
		// reply would read back as a key without a value (found by
		// FuzzGameSpy: \0\\).
		b = append(b, '\\')
	case len(b) == start:
		// An empty reply: an empty query id keeps it a reply when read
		// back (found by FuzzGameSpy: \queryid\\).
		b = append(b, `\queryid\\`...)
	}
	return b
}
