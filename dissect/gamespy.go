package dissect

import (
	"bytes"
	"fmt"
)

// GameSpy queries and replies share the game's UDP port and travel in clear.
// Both are backslash-separated. A query is one or more query words, some of
// which take a value: `\status\`, `\basic\\info\`, `\status\\queryid\99.1\`,
// `\echo\text`, `\secure\ABCDEF` (OpenBC docs/protocol/gamespy-protocol.md,
// "Query Types" and "Master Server Handshake"). A reply is
// `\key\value\key\value...\final\`, usually followed by `\queryid\N.M`.

// GameSpyField is one key and value, in wire order.
type GameSpyField struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// GameSpy is a decoded GameSpy datagram.
type GameSpy struct {
	Query   bool           `json:"query"`             // true for a query, false for a reply
	Kind    string         `json:"kind"`              // query kind: basic, status, info, rules, players, ... (the first query word); "reply" for replies
	QueryID string         `json:"queryid,omitempty"` // the \queryid\ value, of a query or a reply
	Final   bool           `json:"final,omitempty"`   // the reply ends with \final\
	Fields  []GameSpyField `json:"fields,omitempty"`  // key/value pairs in order (queryid and final excluded); a query's words, with the value of echo and secure
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
	parts := bytes.Split(b[1:], []byte{'\\'})
	if parseQuery(&g, parts) {
		return g, nil
	}
	parts = bytes.Split(bytes.TrimSuffix(b[1:], []byte{'\\'}), []byte{'\\'})
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

// queryWords are the query words the stock server answers; the true ones
// take the next field as their value (\echo\text, \secure\CHALLENGE,
// \queryid\N.M).
var queryWords = map[string]bool{"basic": false, "status": false, "info": false, "rules": false, "players": false,
	"packets": false, "echo": true, "secure": true, "queryid": true}

// parseQuery reads parts as a query into g: query words, the values of
// those that take one, and empty fields between them (`\status\\queryid\`).
// It reports false, leaving g as it found it, when a field is neither: the
// datagram is a reply (a reply always has a key that is no query word, such
// as final or gamename). A lone \queryid\ is no query.
func parseQuery(g *GameSpy, parts [][]byte) bool {
	words := 0
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if len(p) == 0 {
			continue
		}
		valued, ok := queryWords[string(p)]
		if !ok {
			return false
		}
		if valued {
			i++
		}
		if string(p) != "queryid" {
			words++
		}
	}
	if words == 0 && len(bytes.Join(parts, nil)) > 0 {
		return false
	}
	g.Query = true
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if len(p) == 0 {
			continue
		}
		v := ""
		if queryWords[string(p)] && i+1 < len(parts) {
			i++
			v = string(parts[i])
		}
		if string(p) == "queryid" {
			if g.QueryID == "" {
				g.QueryID = v
			}
			continue
		}
		if g.Kind == "" {
			g.Kind = string(p)
		}
		g.Fields = append(g.Fields, GameSpyField{Key: string(p), Value: v})
	}
	return true
}

// Append encodes g. A query is its words, each word that takes a value
// followed by it, then \queryid\ when set. A reply ends with \final\ (when
// Final) and then \queryid\ (when set, with no backslash after its value),
// the order of stock replies.
func (g *GameSpy) Append(b []byte) []byte {
	if g.Query {
		for _, f := range g.Fields {
			b = append(append(append(b, '\\'), f.Key...), '\\')
			if queryWords[f.Key] {
				b = append(b, f.Value...)
			}
		}
		if g.QueryID != "" {
			b = append(append(b, `\queryid\`...), g.QueryID...)
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

// GameSpyQueryWords returns the words a query may hold, each true when a
// value follows it: for generated dissectors (bcwire wireshark).
func GameSpyQueryWords() map[string]bool {
	out := make(map[string]bool, len(queryWords))
	for k, v := range queryWords {
		out[k] = v
	}
	return out
}
