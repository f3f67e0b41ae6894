package native

import (
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/game"
)

// TestChecksumCause: a boot names the hash that differs and what was
// expected, as OpenBC's test client's round 0 (its directory hash where
// stock sends the version hash) shows.
func TestChecksumCause(t *testing.T) {
	stock := StockManifest()
	obc := &game.ChecksumResponse{Round: 0, RefHash: 0x4DAFCB2F, DirHash: 0x4DAFCB2F,
		Tree: game.ChecksumTree{Files: []game.ChecksumFile{{Name: 0x373EB677, Content: 0x09555159}}}}
	got := checksumCause(stock[0], obc.Append(nil), game.OpSystemChecksumFail)
	want := `round 0 reference hash 0x4DAFCB2F, stock expects 0x7E0CE243 (version "60"); it is the directory hash (non-stock checksum-ref-dirhash): 0x23 sent`
	if got != want {
		t.Errorf("cause\n got %s\nwant %s", got, want)
	}

	// A file whose content differs in a later round.
	res := game.NewDecoder().Decode(stock[2], game.ClientToServer)
	m, ok := res.Msg.(*game.ChecksumResponse)
	if res.Err != nil || !ok || len(m.Tree.Files) == 0 {
		t.Fatalf("stock round 2 does not decode: %v", res.Err)
	}
	m.Tree.Files[0].Content ^= 1
	got = checksumCause(stock[2], m.Append(nil), game.OpVersionMismatch)
	if !strings.HasPrefix(got, "round 2 file ") || !strings.Contains(got, "content hash") || !strings.HasSuffix(got, ": 0x22 sent") {
		t.Errorf("round 2 cause %q", got)
	}
	if got := checksumCause(stock[2], []byte{0x21}, game.OpVersionMismatch); !strings.Contains(got, "does not decode") {
		t.Errorf("short response cause %q", got)
	}
}
