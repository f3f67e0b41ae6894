package native

// Why a checksum response boots its client, in words a server operator can
// act on: which hash differs from the manifest, what the manifest expects,
// and which refusal was sent, instead of a bare "checksum mismatch".

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// checksumCause says how the response got differs from the manifest's
// want, and which refusal op is sent for it, e.g. `round 0 reference hash
// 0x4DAFCB2F, stock expects 0x7E0CE243 (version "60"): 0x23 sent`.
func checksumCause(want, got []byte, op game.Opcode) string {
	sent := fmt.Sprintf(": 0x%02X sent", uint8(op))
	w, werr := decodeResponse(want)
	g, gerr := decodeResponse(got)
	switch {
	case gerr != nil:
		return fmt.Sprintf("checksum response does not decode (%v)%s", gerr, sent)
	case werr != nil:
		return fmt.Sprintf("round %s response differs from the manifest's, which does not decode (%v)%s", g.Round, werr, sent)
	case g.Round == 0 && g.RefHash != w.RefHash:
		expect := "the manifest expects"
		if w.RefHash == game.VersionHash60 {
			expect = "stock expects"
		}
		s := fmt.Sprintf("round 0 reference hash %s, %s %s", g.RefHash, expect, w.RefHash)
		if w.RefHash == game.VersionHash60 {
			s += ` (version "60")`
		}
		if g.RefHash == g.DirHash {
			s += "; it is the directory hash (non-stock " + dissect.Forms[dissect.FormChecksumDirHash].Name + ")"
		}
		return s + sent
	case g.DirHash != w.DirHash:
		return fmt.Sprintf("round %s directory hash %s, the manifest expects %s%s", g.Round, g.DirHash, w.DirHash, sent)
	}
	return fmt.Sprintf("round %s %s%s", g.Round, treeCause(&w.Tree, &g.Tree), sent)
}

// treeCause names the first file or directory where got differs from want.
func treeCause(want, got *game.ChecksumTree) string {
	have := make(map[game.Hash32]game.Hash32, len(got.Files))
	for _, f := range got.Files {
		have[f.Name] = f.Content
	}
	for _, f := range want.Files {
		c, ok := have[f.Name]
		switch {
		case !ok:
			return fmt.Sprintf("file %s is missing from the response", f.Name)
		case c != f.Content:
			return fmt.Sprintf("file %s content hash %s, the manifest expects %s", f.Name, c, f.Content)
		}
	}
	if len(got.Files) != len(want.Files) {
		return fmt.Sprintf("%d files where the manifest has %d", len(got.Files), len(want.Files))
	}
	if len(got.Subdirs) != len(want.Subdirs) {
		return fmt.Sprintf("%d sub-directories where the manifest has %d", len(got.Subdirs), len(want.Subdirs))
	}
	for i := range want.Subdirs {
		ws, gs := &want.Subdirs[i], &got.Subdirs[i]
		if ws.Name != gs.Name {
			return fmt.Sprintf("sub-directory %s where the manifest has %s", gs.Name, ws.Name)
		}
		if c := treeCause(&ws.Tree, &gs.Tree); c != "" {
			return fmt.Sprintf("in sub-directory %s: %s", ws.Name, c)
		}
	}
	return "response differs from the manifest's in its encoding"
}

// decodeResponse decodes a ChecksumResponse payload (opcode included) into
// a value of its own.
func decodeResponse(p []byte) (*game.ChecksumResponse, error) {
	res := game.NewDecoder().Decode(p, game.ClientToServer)
	if res.Err != nil {
		return nil, res.Err
	}
	m, ok := res.Msg.(*game.ChecksumResponse)
	if !ok {
		return nil, fmt.Errorf("opcode %v, not ChecksumResponse", res.Msg.Opcode())
	}
	return m, nil
}
