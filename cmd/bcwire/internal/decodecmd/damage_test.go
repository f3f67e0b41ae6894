package decodecmd

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/cliutil"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/statscmd"
	"github.com/bcwire/bcwire/report"
)

const battlePcap = "../../../../testdata/pcaps/battle.pcap"

type jsonRecord struct {
	Frame int    `json:"frame"`
	Error string `json:"error"`
}

// decodeFile runs `decode --json` (and `stats`) on data within a time
// limit and returns the records, the exit status and the highest frame
// number printed.
func decodeFile(t *testing.T, name string, data []byte, workers int) (recs []jsonRecord, code, lastFrame int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var out bytes.Buffer
	go func() {
		defer close(done)
		o := &Options{JSON: true, Files: []string{path}, Caps: cliutil.Caps{Workers: workers}}
		var s string
		s, code = run(t, o)
		out.WriteString(s[:bytes.IndexByte([]byte(s), 0)])
		// stats must agree that the capture is damaged.
		var sout, serr bytes.Buffer
		err := statscmd.Run(&statscmd.Options{IO: &report.IO{Out: &sout, Err: &serr}, Files: []string{path}, Caps: cliutil.Caps{Workers: workers}})
		scode := 0
		if ee, ok := err.(*cliutil.ExitError); ok {
			scode = ee.Code
		} else if err != nil {
			t.Errorf("stats: %v", err)
		}
		if scode != code {
			t.Errorf("stats exit %d, decode exit %d", scode, code)
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: decode did not finish within 60 s", name)
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r jsonRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
		lastFrame = max(lastFrame, r.Frame)
	}
	return recs, code, lastFrame
}

// pcapRecords returns the offsets of the record headers of a classic pcap.
func pcapRecords(t *testing.T, b []byte) []int {
	var offs []int
	for off := 24; off+16 <= len(b); {
		offs = append(offs, off)
		off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
	}
	if len(offs) == 0 {
		t.Fatal("no records")
	}
	return offs
}

func damagedFrames(recs []jsonRecord) map[int]bool {
	m := map[int]bool{}
	for _, r := range recs {
		if r.Error != "" {
			m[r.Frame] = true
		}
	}
	return m
}

func TestDamagedCaptures(t *testing.T) {
	clean, err := os.ReadFile(battlePcap)
	if err != nil {
		t.Fatal(err)
	}
	offs := pcapRecords(t, clean)
	frames := len(offs)
	for _, workers := range []int{1, 2} {
		// A file cut in the middle of its last record: every whole record
		// decodes, the cut one is reported, exit 1.
		t.Run("truncated", func(t *testing.T) {
			cut := clean[:offs[frames-1]+16+10]
			recs, code, last := decodeFile(t, "truncated.pcap", cut, workers)
			if code != cliutil.ExitDamaged {
				t.Fatalf("exit %d, want 1", code)
			}
			if d := damagedFrames(recs); !d[frames] || len(d) != 1 {
				t.Errorf("damaged frames %v, want only the cut frame %d", d, frames)
			}
			if last != frames {
				t.Errorf("last frame %d, want %d", last, frames)
			}
		})
		// A record header claiming 2 GB in the middle: reported, and the
		// reader resynchronises so that the records after it decode.
		t.Run("absurd length", func(t *testing.T) {
			b := bytes.Clone(clean)
			mid := offs[frames/2]
			binary.LittleEndian.PutUint32(b[mid+8:], 0x7FFFFFF0)
			binary.LittleEndian.PutUint32(b[mid+12:], 0x7FFFFFF0)
			recs, code, last := decodeFile(t, "absurd.pcap", b, workers)
			if code != cliutil.ExitDamaged {
				t.Fatalf("exit %d, want 1", code)
			}
			if d := damagedFrames(recs); len(d) == 0 || len(d) > 3 {
				t.Errorf("damaged frames %v, want the bad record (and at most a neighbour)", d)
			}
			if last < frames-1 {
				t.Errorf("last frame %d: decoding stopped early (file has %d)", last, frames)
			}
		})
		// editcap -E 0.02 style: 2% of the packet bytes (not the record
		// headers) replaced at random, seeded. Decoding reaches the end,
		// exits 1, and the damage it reports is in corrupted frames.
		t.Run("random packet bytes", func(t *testing.T) {
			b := bytes.Clone(clean)
			rng := rand.New(rand.NewPCG(7, 2))
			corrupted := map[int]bool{} // any byte of the packet
			payload := map[int]bool{}   // a byte of the UDP payload
			for i, off := range offs {
				n := int(binary.LittleEndian.Uint32(b[off+8:]))
				for j := off + 16; j < off+16+n; j++ {
					if rng.Float64() < 0.02 {
						b[j] = byte(rng.Uint32())
						corrupted[i+1] = true
						if j-off-16 >= 14+20+8 {
							payload[i+1] = true
						}
					}
				}
			}
			recs, code, last := decodeFile(t, "corrupt.pcap", b, workers)
			if code != cliutil.ExitDamaged {
				t.Fatalf("exit %d, want 1", code)
			}
			if last < frames-5 {
				t.Errorf("last frame %d: decoding stopped early (file has %d)", last, frames)
			}
			// Corrupted MAC addresses, TTLs, IP identifications or
			// checksums change nothing that bcwire reads, and a changed
			// address moves a datagram to another flow; but a changed
			// byte of the encrypted payload garbles everything after it.
			// The protocol has no checksum, so garbage that still frames
			// and decodes cannot be told from data (about a third of
			// them here); at least half must be reported, and nothing
			// that was not corrupted may be.
			d := damagedFrames(recs)
			hits, clean := 0, 0
			for f := range d {
				switch {
				case payload[f]:
					hits++
				case !corrupted[f]:
					clean++
				}
			}
			seen := map[int]bool{}
			for _, r := range recs {
				seen[r.Frame] = true
			}
			silent := 0
			for f := range payload {
				if !seen[f] {
					silent++
				}
			}
			t.Logf("%d payload-corrupted frames produced no record at all", silent)
			t.Logf("%d of %d frames corrupted (%d in the UDP payload); %d reported damaged, %d of them with a corrupted payload, %d not corrupted at all",
				len(corrupted), frames, len(payload), len(d), hits, clean)
			if hits < len(payload)/2 {
				t.Errorf("only %d of %d frames with a corrupted payload reported", hits, len(payload))
			}
			if clean > 0 {
				t.Errorf("%d uncorrupted frames reported damaged", clean)
			}
		})
		// 2% of all bytes, record headers included: the reader has to
		// resynchronise again and again. No panic, no hang, exit 1.
		t.Run("random file bytes", func(t *testing.T) {
			b := bytes.Clone(clean)
			rng := rand.New(rand.NewPCG(9, 4))
			for j := 24; j < len(b); j++ {
				if rng.Float64() < 0.02 {
					b[j] = byte(rng.Uint32())
				}
			}
			recs, code, _ := decodeFile(t, "corrupt-all.pcap", b, workers)
			if code != cliutil.ExitDamaged {
				t.Fatalf("exit %d, want 1", code)
			}
			if len(damagedFrames(recs)) < 100 {
				t.Errorf("only %d damaged frames reported", len(damagedFrames(recs)))
			}
		})
	}
}

// pcapng blocks of unknown types are legal and skipped; a damaged block
// among them is reported and the packets after it still decode.
func TestPcapngUnknownAndDamagedBlocks(t *testing.T) {
	clean, err := os.ReadFile("../../../../testdata/pcaps/duel.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]byte
	for off := 0; off+12 <= len(clean); {
		n := int(binary.LittleEndian.Uint32(clean[off+4:]))
		blocks = append(blocks, clean[off:off+n])
		off += n
	}
	unknown := func(typ uint32) []byte {
		b := binary.LittleEndian.AppendUint32(nil, typ)
		b = binary.LittleEndian.AppendUint32(b, 20)
		b = append(b, 1, 2, 3, 4, 5, 6, 7, 8)
		return binary.LittleEndian.AppendUint32(b, 20)
	}
	var withUnknown []byte
	for i, b := range blocks {
		withUnknown = append(withUnknown, b...)
		if i >= 2 && i%50 == 0 {
			withUnknown = append(withUnknown, unknown(0x0BAD0000+uint32(i))...)
		}
	}
	want, wcode, wlast := decodeFile(t, "clean.pcapng", clean, 1)
	got, gcode, glast := decodeFile(t, "unknown.pcapng", withUnknown, 1)
	if wcode != 0 || gcode != 0 || len(got) != len(want) || glast != wlast {
		t.Fatalf("unknown blocks: exit %d (clean %d), %d records (clean %d), last frame %d (clean %d)", gcode, wcode, len(got), len(want), glast, wlast)
	}
	// Now break one packet block's trailing length in the middle.
	var damaged []byte
	for i, b := range blocks {
		b = bytes.Clone(b)
		if i == len(blocks)/2 {
			binary.LittleEndian.PutUint32(b[len(b)-4:], 0xDEAD)
		}
		damaged = append(damaged, b...)
		if i >= 2 && i%50 == 0 {
			damaged = append(damaged, unknown(0x0BAD0000+uint32(i))...)
		}
	}
	recs, code, last := decodeFile(t, "damaged.pcapng", damaged, 2)
	if code != cliutil.ExitDamaged {
		t.Fatalf("exit %d, want 1", code)
	}
	if d := damagedFrames(recs); len(d) == 0 {
		t.Error("the damaged block was not reported")
	}
	if last < wlast-1 {
		t.Errorf("last frame %d: decoding stopped early (clean file ends at %d)", last, wlast)
	}
}
