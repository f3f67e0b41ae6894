// Package manifest reads checksum manifests: for each checksum round, the
// ChecksumResponse (0x21) a client with good files sends. A server checks
// clients' answers against one; `bcwire verify --manifest` answers a
// server's checksum requests from one instead of from the capture.
//
// Two forms are read:
//
//   - bcwire's own TOML (what `bcwire serve --print-manifest` writes): a
//     [rounds] table mapping each round to the hex of the whole 0x21 game
//     message.
//   - OpenBC's hash-manifest JSON: a "directories" list, one per round,
//     each with "index" (the round), "dir_name_hash", "files" (each with
//     "name_hash" and "content_hash") and "subdirs" (each with "name_hash",
//     "files" and "subdirs"), plus a top-level "version_string_hash" that
//     round 0's response carries as its reference hash. Hashes are
//     "0x…" strings or numbers.
//
// A file is taken as JSON when its first non-blank byte is '{'.
package manifest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/cfgfile"
)

// Manifest is the checksum responses a good client sends, by round: the
// whole 0x21 game message.
type Manifest map[game.ChecksumRound][]byte

// Load reads a manifest file in either form.
func Load(path string) (Manifest, error) {
	b, err := cfgfile.Read(path, cfgfile.MaxManifest)
	if err != nil {
		return nil, err
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Parse reads a manifest in either form. The nesting depth (and, for
// JSON, duplicate keys) is checked before parsing, and a parser's error
// is cut to a short excerpt (see package cfgfile).
func Parse(b []byte) (Manifest, error) {
	if len(b) > cfgfile.MaxManifest {
		return nil, fmt.Errorf("%d bytes; a manifest is at most %d KiB", len(b), cfgfile.MaxManifest>>10)
	}
	var m Manifest
	var err error
	if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		m, err = ParseOpenBC(b)
	} else {
		m, err = ParseTOML(b)
	}
	return m, cfgfile.ShortError(err)
}

// ParseTOML reads bcwire's TOML form:
//
//	[rounds]
//	0 = "21 00 43 E2 0C 7E ..."
func ParseTOML(b []byte) (Manifest, error) {
	var f struct {
		Rounds map[string]string `toml:"rounds"`
	}
	if err := cfgfile.CheckTOMLDepth(b); err != nil {
		return nil, err
	}
	if _, err := toml.Decode(string(b), &f); err != nil {
		return nil, err
	}
	if len(f.Rounds) == 0 {
		return nil, errors.New("no [rounds] table")
	}
	m := Manifest{}
	for k, v := range f.Rounds {
		n, err := strconv.ParseUint(strings.TrimSpace(k), 0, 8)
		if err != nil {
			return nil, fmt.Errorf("round %q is not a number 0-255", cfgfile.Excerpt(k))
		}
		clean := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\t' || r == ':' {
				return -1
			}
			return r
		}, v)
		p, err := hex.DecodeString(clean)
		if err != nil || len(p) < 2 || p[0] != byte(game.OpChecksumResponse) || p[1] != byte(n) {
			return nil, fmt.Errorf("round %s: want the hex of a ChecksumResponse (21 %02X ...)", cfgfile.Excerpt(k), n)
		}
		m[game.ChecksumRound(n)] = p
	}
	return m, nil
}

// hash is a 32-bit hash written as "0x…" (or decimal) string or number.
type hash uint32

func (h *hash) UnmarshalJSON(b []byte) error {
	s := string(b)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	n, err := strconv.ParseUint(strings.TrimSpace(s), 0, 32)
	if err != nil {
		return fmt.Errorf("hash %s: want a 32-bit number such as \"0x4DAFCB2F\"", cfgfile.Excerpt(string(b)))
	}
	*h = hash(n)
	return nil
}

type jsonFile struct {
	Name    *hash `json:"name_hash"`
	Content *hash `json:"content_hash"`
}

type jsonDir struct {
	Index   *int       `json:"index"`
	Path    string     `json:"path"`
	DirHash *hash      `json:"dir_name_hash"`
	Name    *hash      `json:"name_hash"`
	Files   []jsonFile `json:"files"`
	Subdirs []jsonDir  `json:"subdirs"`
}

type jsonManifest struct {
	VersionHash *hash     `json:"version_string_hash"`
	Directories []jsonDir `json:"directories"`
}

// ParseOpenBC reads OpenBC's hash-manifest JSON. Files and subdirectories
// go on the wire in the order the manifest lists them.
func ParseOpenBC(b []byte) (Manifest, error) {
	var f jsonManifest
	if err := cfgfile.CheckJSON(b); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if len(f.Directories) == 0 {
		return nil, errors.New("no \"directories\" list")
	}
	m := Manifest{}
	for i, d := range f.Directories {
		round := i
		if d.Index != nil {
			round = *d.Index
		}
		if round < 0 || round > 255 {
			return nil, fmt.Errorf("directory %d: index %d is not a round 0-255", i, round)
		}
		if d.DirHash == nil {
			return nil, fmt.Errorf("directory %d (%s): no dir_name_hash", i, d.Path)
		}
		if _, dup := m[game.ChecksumRound(round)]; dup {
			return nil, fmt.Errorf("directory %d (%s): round %d listed twice", i, d.Path, round)
		}
		resp := game.ChecksumResponse{Round: game.ChecksumRound(round), DirHash: game.Hash32(*d.DirHash)}
		if round == 0 {
			if f.VersionHash == nil {
				return nil, errors.New("round 0 needs the top-level version_string_hash")
			}
			resp.RefHash = game.Hash32(*f.VersionHash)
		}
		tree, err := treeOf(d, 0)
		if err != nil {
			return nil, fmt.Errorf("directory %d (%s): %w", i, d.Path, err)
		}
		resp.Tree = tree
		m[resp.Round] = resp.Append(nil)
	}
	return m, nil
}

// maxDepth bounds subdirectory nesting (the wire format nests without a
// limit; a manifest deeper than this is not a game's script tree).
const maxDepth = 16

func treeOf(d jsonDir, depth int) (game.ChecksumTree, error) {
	var t game.ChecksumTree
	if depth > maxDepth {
		return t, errors.New("subdirectories nested too deep")
	}
	if len(d.Files) > 0xFFFF || len(d.Subdirs) > 0xFF {
		return t, fmt.Errorf("%d files and %d subdirectories do not fit the wire's counts", len(d.Files), len(d.Subdirs))
	}
	t.Files = make([]game.ChecksumFile, 0, len(d.Files))
	for j, f := range d.Files {
		if f.Name == nil || f.Content == nil {
			return t, fmt.Errorf("file %d: needs name_hash and content_hash", j)
		}
		t.Files = append(t.Files, game.ChecksumFile{Name: game.Hash32(*f.Name), Content: game.Hash32(*f.Content)})
	}
	for j, s := range d.Subdirs {
		if s.Name == nil {
			return t, fmt.Errorf("subdir %d: no name_hash", j)
		}
		sub, err := treeOf(s, depth+1)
		if err != nil {
			return t, fmt.Errorf("subdir %d: %w", j, err)
		}
		t.Subdirs = append(t.Subdirs, game.ChecksumSubdir{Name: game.Hash32(*s.Name), Tree: sub})
	}
	return t, nil
}

// Write writes m in bcwire's TOML form.
func Write(w io.Writer, m Manifest) error {
	rounds := make([]int, 0, len(m))
	for r := range m {
		rounds = append(rounds, int(r))
	}
	sort.Ints(rounds)
	var b strings.Builder
	b.WriteString("# bcwire checksum manifest: the ChecksumResponse (0x21) a good client sends\n# in each round, as hex.\n[rounds]\n")
	for _, r := range rounds {
		fmt.Fprintf(&b, "%d = \"% X\"\n", r, m[game.ChecksumRound(r)])
	}
	_, err := io.WriteString(w, b.String())
	return err
}
