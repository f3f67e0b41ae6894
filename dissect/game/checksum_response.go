package game

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// ChecksumResponse (0x21) is the client's answer to a ChecksumRequest: the
// round it answers, the hash of the directory name and a tree of file hashes.
//
// Layout (all integers little-endian):
//
//	round     u8
//	ref hash  u32   round 0 only: StringHash of the game version ("60"
//	                gives 0x7E0CE243 in stock traffic)
//	dir hash  u32
//	tree:
//	  file count   u16
//	  files        file count × (name hash u32, content hash u32)
//	  subdir count u8
//	  names        subdir count × name hash u32, all names first
//	  trees        subdir count × tree (this same layout), in name order
//
// That is why the round-0 and round-1 responses of the vectors differ in
// shape: `21 00 2FCBAF4D 2FCBAF4D 0100 …` has the extra ref hash, `21 01
// 2FCBAF4D 0100 …` starts with the directory hash. Non-recursive rounds end
// with a subdir count of 0; recursive rounds (2 and 0xFF) nest. There are no
// packed bits in a response.
type ChecksumResponse struct {
	Round ChecksumRound `json:"round"`
	// RefHash is on the wire only when Round is 0 (Append ignores it
	// otherwise).
	RefHash Hash32       `json:"ref_hash,omitempty"`
	DirHash Hash32       `json:"dir_hash"`
	Tree    ChecksumTree `json:"tree"`
}

// ChecksumTree is one directory's files and sub-directories.
type ChecksumTree struct {
	Files   []ChecksumFile   `json:"files"`
	Subdirs []ChecksumSubdir `json:"subdirs,omitempty"`
}

// ChecksumFile is one file's name hash and content hash.
type ChecksumFile struct {
	Name    Hash32 `json:"name"`
	Content Hash32 `json:"content"`
}

// ChecksumSubdir is a sub-directory: the hash of its name and its own tree.
type ChecksumSubdir struct {
	Name Hash32       `json:"name"`
	Tree ChecksumTree `json:"tree"`
}

// Hash32 is a 32-bit checksum-exchange hash, shown as 0x%08X.
type Hash32 uint32

func (h Hash32) String() string { return fmt.Sprintf("0x%08X", uint32(h)) }

// MarshalJSON is AppendJSON for encoding/json.
func (h Hash32) MarshalJSON() ([]byte, error) { return h.AppendJSON(nil), nil }

// maxChecksumDepth bounds directory nesting so hostile input cannot recurse
// without limit. A Windows path (MAX_PATH 260) cannot nest deeper than 130
// directories, so stock clients stay far below it.
const maxChecksumDepth = 130

func init() { register(OpChecksumResponse, func() Message { return new(ChecksumResponse) }) }

func (m *ChecksumResponse) Opcode() Opcode { return OpChecksumResponse }

func (m *ChecksumResponse) decode(r *dissect.Reader, _ *Context) {
	m.Round = ChecksumRound(r.U8("round"))
	m.RefHash = 0
	if m.Round == 0 {
		m.RefHash = Hash32(r.U32("ref hash"))
	}
	m.DirHash = Hash32(r.U32("dir hash"))
	m.Tree.decode(r, 0)
}

// decode reads t in place, reusing its slices (and those of its subtrees).
func (t *ChecksumTree) decode(r *dissect.Reader, depth int) {
	if depth > maxChecksumDepth {
		r.Failf("checksum tree", "directories nested deeper than %d", maxChecksumDepth)
		return
	}
	n := int(r.U16("file count"))
	if r.Err() != nil || r.Len() < n*8 {
		// Checked before growing the slice, so a short message never
		// allocates for a count it cannot hold.
		r.Fail("files", dissect.ErrShort)
		t.Files, t.Subdirs = t.Files[:0], t.Subdirs[:0]
		return
	}
	t.Files = t.Files[:0]
	for i := 0; i < n; i++ {
		name := r.U32("file name hash")
		t.Files = append(t.Files, ChecksumFile{Name: Hash32(name), Content: Hash32(r.U32("file content hash"))})
	}
	k := int(r.U8("subdir count"))
	if r.Err() != nil || r.Len() < k*4 {
		r.Fail("subdir name hashes", dissect.ErrShort)
		t.Subdirs = t.Subdirs[:0]
		return
	}
	if cap(t.Subdirs) >= k {
		t.Subdirs = t.Subdirs[:k]
	} else {
		t.Subdirs = append(t.Subdirs[:cap(t.Subdirs)], make([]ChecksumSubdir, k-cap(t.Subdirs))...)
	}
	for i := range t.Subdirs {
		t.Subdirs[i].Name = Hash32(r.U32("subdir name hash"))
	}
	for i := range t.Subdirs {
		t.Subdirs[i].Tree.decode(r, depth+1)
		if r.Err() != nil {
			return
		}
	}
}

// Append encodes m. A tree level with more than 65535 files or 255
// sub-directories cannot be expressed; only the first 65535 files and 255
// sub-directories are written, so the counts always match what follows.
func (m *ChecksumResponse) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpChecksumResponse)))
	w.U8(uint8(m.Round))
	if m.Round == 0 {
		w.U32(uint32(m.RefHash))
	}
	w.U32(uint32(m.DirHash))
	m.Tree.append(w)
	return w.Bytes()
}

func (t *ChecksumTree) append(w *dissect.Writer) {
	files := t.Files
	if len(files) > 0xFFFF {
		files = files[:0xFFFF]
	}
	w.U16(uint16(len(files)))
	for _, f := range files {
		w.U32(uint32(f.Name))
		w.U32(uint32(f.Content))
	}
	subs := t.Subdirs
	if len(subs) > 0xFF {
		subs = subs[:0xFF]
	}
	w.U8(uint8(len(subs)))
	for _, s := range subs {
		w.U32(uint32(s.Name))
	}
	for i := range subs {
		subs[i].Tree.append(w)
	}
}

// Count returns the number of files and directories below t, all levels.
func (t *ChecksumTree) Count() (files, dirs int) {
	files = len(t.Files)
	for i := range t.Subdirs {
		f, d := t.Subdirs[i].Tree.Count()
		files += f
		dirs += d + 1
	}
	return files, dirs
}

// String lists every hash in wire order: files as name:content, then the
// sub-directory name hashes, then each sub-directory's tree in braces.
func (m *ChecksumResponse) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "round=%s", m.Round)
	if m.Round == 0 {
		fmt.Fprintf(&sb, " ref=%s", m.RefHash)
	}
	fmt.Fprintf(&sb, " dir=%s ", m.DirHash)
	// Small trees are shown whole; a large one (round 2 lists every ship
	// script) is summarised with a digest of its bytes, so the line stays
	// readable and two different trees still print differently. -V and
	// JSON show every entry.
	if files, dirs := m.Tree.Count(); files+dirs > 4 {
		var w dissect.Writer
		m.Tree.append(&w)
		h := fnv.New32a()
		h.Write(w.Bytes())
		fmt.Fprintf(&sb, "files=%d subdirs=%d tree-digest=%08X", files, dirs, h.Sum32())
		return sb.String()
	}
	m.Tree.write(&sb)
	return sb.String()
}

func (t *ChecksumTree) write(sb *strings.Builder) {
	fmt.Fprintf(sb, "files=%d[", len(t.Files))
	for i, f := range t.Files {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(sb, "%s:%s", f.Name, f.Content)
	}
	fmt.Fprintf(sb, "] subdirs=%d[", len(t.Subdirs))
	for i := range t.Subdirs {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(t.Subdirs[i].Name.String())
	}
	sb.WriteByte(']')
	for i := range t.Subdirs {
		sb.WriteString(" {")
		t.Subdirs[i].Tree.write(sb)
		sb.WriteByte('}')
	}
}

// AppendJSON appends the hash as a "0x%08X" string.
func (h Hash32) AppendJSON(b []byte) []byte {
	return append(jsonenc.Hex32(append(b, '"'), uint32(h)), '"')
}
