package decodecmd

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/session"
)

// scanExit runs the session scan of stats, timeline and report on path and
// returns its exit error.
func scanExit(path string, caps input.Caps) error {
	res, err := scan.Run(&scan.Options{IO: &iostreams.IOStreams{Out: io.Discard, Err: io.Discard}, Files: []string{path},
		Quiet: true, Session: caps.Session(session.Options{}), Workers: caps.Workers, Flow: caps.Flow(), Capture: caps.Capture()},
		func(string, *session.Session) error { return nil })
	if err != nil {
		return err
	}
	return res.Err()
}

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
		o := &Options{JSON: true, Files: []string{path}, Caps: input.Caps{Workers: workers}}
		var s string
		s, code = run(t, o)
		out.WriteString(s[:bytes.IndexByte([]byte(s), 0)])
		// stats (the session scan) must agree that the capture is damaged.
		err := scanExit(path, input.Caps{Workers: workers})
		scode := 0
		if ee, ok := err.(*exit.Error); ok {
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
			if code != exit.CodeDamaged {
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
			if code != exit.CodeDamaged {
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
		// exits 1, and reports exactly the frames whose IPv4 or UDP bytes
		// changed: the IPv4 header and UDP checksums (which the bundled
		// captures carry, as real stacks send them) catch every change.
		t.Run("random packet bytes", func(t *testing.T) {
			b := bytes.Clone(clean)
			rng := rand.New(rand.NewPCG(7, 2))
			ipudp := map[int]bool{}     // a byte of the IPv4 header, UDP header or payload changed
			mac := map[int]bool{}       // a byte of the Ethernet addresses changed
			etherType := map[int]bool{} // a byte of the EtherType changed
			for i, off := range offs {
				n := int(binary.LittleEndian.Uint32(b[off+8:]))
				for j := off + 16; j < off+16+n; j++ {
					if rng.Float64() >= 0.02 {
						continue
					}
					v := byte(rng.Uint32())
					if v == b[j] {
						continue // a "corruption" that changes nothing
					}
					b[j] = v
					switch pos := j - off - 16; {
					case pos < 12:
						mac[i+1] = true
					case pos < 14:
						etherType[i+1] = true
					default:
						ipudp[i+1] = true
					}
				}
			}
			recs, code, last := decodeFile(t, "corrupt.pcap", b, workers)
			if code != exit.CodeDamaged {
				t.Fatalf("exit %d, want 1", code)
			}
			if last < frames-5 {
				t.Errorf("last frame %d: decoding stopped early (file has %d)", last, frames)
			}
			d := damagedFrames(recs)
			// Every frame with a changed IPv4 or UDP byte is reported,
			// except:
			//   - where the EtherType changed too: such a frame no longer
			//     says it carries IPv4 and is skipped as other traffic,
			//     which nothing can tell from the real thing;
			//   - where the changes cancel out in the ones' complement sums
			//     (two bytes of the same lane changed by +k and -k), which
			//     no Internet checksum can see (about 1 in 255 frames with
			//     two changes in the same lane).
			// Changed MAC addresses cannot be detected (a capture has no
			// Ethernet FCS) and are harmless: bcwire does not read them.
			// So a frame with only those changed decodes as if clean, and
			// so does every frame that was not touched.
			missed, wrong, cancelled := 0, 0, 0
			for f := range ipudp {
				off := offs[f-1] + 16
				n := int(binary.LittleEndian.Uint32(b[offs[f-1]+8:]))
				switch {
				case etherType[f] || d[f]:
				case checksumsBlind(clean[off:off+n], b[off:off+n]):
					cancelled++
				default:
					missed++
					if missed <= 5 {
						t.Errorf("frame %d: IPv4/UDP bytes changed, not reported", f)
					}
				}
			}
			for f := range d {
				if !ipudp[f] {
					wrong++
					if wrong <= 5 {
						t.Errorf("frame %d reported damaged, but only its MAC addresses (%v) or nothing changed", f, mac[f])
					}
				}
			}
			t.Logf("%d of %d frames with changed IPv4/UDP bytes, %d with a changed EtherType, %d with changed MAC addresses; %d reported damaged; %d with changes that cancel in the checksums; %d missed, %d wrongly reported",
				len(ipudp), frames, len(etherType), len(mac), len(d), cancelled, missed, wrong)
			if cancelled > len(ipudp)/100 {
				t.Errorf("%d frames with changes that cancel out: more than chance allows", cancelled)
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
			if code != exit.CodeDamaged {
				t.Fatalf("exit %d, want 1", code)
			}
			if len(damagedFrames(recs)) < 100 {
				t.Errorf("only %d damaged frames reported", len(damagedFrames(recs)))
			}
		})
	}
}

// checksumsBlind tells whether the changes between two Ethernet frames of an
// IPv4/UDP datagram leave both the IPv4 header's and the UDP datagram's
// ones' complement sums as they were, so that no checksum can notice them.
func checksumsBlind(old, cur []byte) bool {
	udpSum := func(f []byte) uint32 {
		ip := f[14:]
		return onesSum16(onesSum16(onesSum16(0, ip[12:20]), []byte{0, 17, byte((len(ip) - 20) >> 8), byte(len(ip) - 20)}), ip[20:])
	}
	return onesSum16(0, old[14:34]) == onesSum16(0, cur[14:34]) && udpSum(old) == udpSum(cur)
}

// onesSum16 adds b (big-endian 16-bit words, an odd last byte padded) to a
// folded ones' complement sum.
func onesSum16(sum uint32, b []byte) uint32 {
	for i := 0; i < len(b); i += 2 {
		w := uint32(b[i]) << 8
		if i+1 < len(b) {
			w |= uint32(b[i+1])
		}
		sum += w
		sum = sum>>16 + sum&0xffff
	}
	return sum
}

// pcapngBlocks splits a little-endian pcapng file into its blocks.
func pcapngBlocks(t *testing.T, file []byte) [][]byte {
	t.Helper()
	var blocks [][]byte
	for off := 0; off+12 <= len(file); {
		n := int(binary.LittleEndian.Uint32(file[off+4:]))
		blocks = append(blocks, file[off:off+n])
		off += n
	}
	if len(blocks) < 100 {
		t.Fatalf("only %d blocks", len(blocks))
	}
	return blocks
}

// ngBlock builds a little-endian pcapng block with the given body.
func ngBlock(typ uint32, body []byte) []byte {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	b := binary.LittleEndian.AppendUint32(nil, typ)
	b = binary.LittleEndian.AppendUint32(b, uint32(12+len(body)))
	b = append(b, body...)
	return binary.LittleEndian.AppendUint32(b, uint32(12+len(body)))
}

// A block of a type the pcapng specification does not define is damage
// (issue #10: "a pcapng with unknown blocks" must be reported and exit 1):
// each is reported with its file offset, type and length, and every packet
// after it still decodes. A damaged block among them is reported too.
func TestPcapngUnknownAndDamagedBlocks(t *testing.T) {
	clean, err := os.ReadFile("../../../../testdata/pcaps/duel.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	blocks := pcapngBlocks(t, clean)
	unknown := func(typ uint32) []byte { return ngBlock(typ, []byte{1, 2, 3, 4, 5, 6, 7, 8}) }
	var withUnknown []byte
	inserted := map[string]bool{} // "offset type" of each unknown block
	for i, b := range blocks {
		withUnknown = append(withUnknown, b...)
		if i >= 2 && i%50 == 0 {
			inserted[fmt.Sprintf("file offset %d): capture: unknown pcapng block: type 0x%08X, 20 bytes", len(withUnknown), 0x0BAD0000+uint32(i))] = true
			withUnknown = append(withUnknown, unknown(0x0BAD0000+uint32(i))...)
		}
	}
	want, wcode, wlast := decodeFile(t, "clean.pcapng", clean, 1)
	got, gcode, glast := decodeFile(t, "unknown.pcapng", withUnknown, 1)
	if wcode != 0 || gcode != exit.CodeDamaged || len(got) != len(want)+len(inserted) || glast != wlast {
		t.Fatalf("unknown blocks: exit %d (clean %d), %d records (clean %d, %d blocks inserted), last frame %d (clean %d)",
			gcode, wcode, len(got), len(want), len(inserted), glast, wlast)
	}
	reported := 0
	for _, r := range got {
		if r.Error == "" {
			continue
		}
		reported++
		i := strings.Index(r.Error, "file offset ")
		if r.Frame != 0 || i < 0 || !inserted[strings.TrimSuffix(r.Error[i:], "; skipped")] {
			t.Errorf("unexpected damage record %+v", r)
		}
	}
	if reported != len(inserted) {
		t.Errorf("%d unknown blocks reported, %d inserted", reported, len(inserted))
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
	if code != exit.CodeDamaged {
		t.Fatalf("exit %d, want 1", code)
	}
	// Blocks 0 and 1 are the section header and the interface, so block i
	// is frame i-1.
	if d := damagedFrames(recs); !d[len(blocks)/2-1] {
		t.Errorf("the damaged block (frame %d) was not reported: %v", len(blocks)/2-1, d)
	}
	if last < wlast-1 {
		t.Errorf("last frame %d: decoding stopped early (clean file ends at %d)", last, wlast)
	}
}

// The block types the pcapng specification defines but bcwire has no use
// for (name resolution, interface statistics, IRIG, ARINC 429, systemd
// journal, decryption secrets, Hone, Sysdig, custom blocks) and local-use
// types pass silently, and the obsolete Packet Block is decoded like an
// Enhanced one: the output is that of the clean file, exit 0.
func TestPcapngStandardBlocksPassSilently(t *testing.T) {
	clean, err := os.ReadFile("../../../../testdata/pcaps/duel.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	nrb := le.AppendUint16(nil, 1) // nrb_record_ipv4: 10.0.0.1 "server"
	nrb = le.AppendUint16(nrb, 11)
	nrb = append(nrb, 10, 0, 0, 1, 's', 'e', 'r', 'v', 'e', 'r', 0, 0)
	nrb = append(nrb, 0, 0, 0, 0) // nrb_record_end
	isb := make([]byte, 12)       // interface 0, time stamp 0
	dsb := le.AppendUint32(nil, 0x544c534b)
	dsb = le.AppendUint32(dsb, 4)
	dsb = append(dsb, "keys"...)
	custom := le.AppendUint32(nil, 32473) // the documentation PEN
	custom = append(custom, "private data"...)
	extra := [][]byte{
		ngBlock(4, nrb), ngBlock(5, isb), ngBlock(7, make([]byte, 8)), ngBlock(8, make([]byte, 8)),
		ngBlock(9, []byte("__CURSOR=s=1\n")), ngBlock(0x0A, dsb), ngBlock(0x101, make([]byte, 8)),
		ngBlock(0x204, make([]byte, 8)), ngBlock(0x00000BAD, custom), ngBlock(0x40000BAD, custom),
		ngBlock(0x80000001, make([]byte, 8)),
	}
	var file []byte
	pbs := 0
	for i, b := range pcapngBlocks(t, clean) {
		b = bytes.Clone(b)
		// Every 7th enhanced packet block becomes an obsolete packet block:
		// on interface 0 the two bodies are laid out alike.
		if le.Uint32(b) == 6 && le.Uint32(b[8:]) == 0 && i%7 == 0 {
			le.PutUint32(b, 2)
			pbs++
		}
		file = append(file, b...)
		if i >= 2 && i%40 == 0 {
			file = append(file, extra[(i/40)%len(extra)]...)
		}
	}
	if pbs == 0 {
		t.Fatal("no packet block made")
	}
	dir := t.TempDir()
	decode := func(name string, data []byte) (string, int) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		// Without -q (which prints no packets): the summary line names
		// the file, the rest of stderr must be the same.
		out, code := run(t, &Options{JSON: true, Files: []string{path}})
		return strings.ReplaceAll(out, path, "FILE"), code
	}
	want, wcode := decode("clean.pcapng", clean)
	got, gcode := decode("standard.pcapng", file)
	if wcode != 0 || gcode != 0 || got != want {
		t.Fatalf("exit %d (clean %d); output the same: %v (%d and %d bytes)", gcode, wcode, got == want, len(got), len(want))
	}
}

// A datagram whose payload changed on the way fails its UDP checksum: it is
// reported once, with its frame number, addresses and bytes, and not
// dissected. --checksums=off, for captures whose sending host offloaded
// checksums, dissects it like any other.
func TestChecksumFlag(t *testing.T) {
	clean, err := os.ReadFile(battlePcap)
	if err != nil {
		t.Fatal(err)
	}
	offs := pcapRecords(t, clean)
	const frame = 500
	b := bytes.Clone(clean)
	b[offs[frame-1]+16+14+20+8+3] ^= 0x01 // a payload byte
	path := filepath.Join(t.TempDir(), "flipped.pcap")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := map[int]string{} // verify mode's output by worker count
	decode := func(mode string, workers int) (recs []map[string]any, err error) {
		var out, errb bytes.Buffer
		o := &Options{IO: &iostreams.IOStreams{Out: &out, Err: &errb}, JSON: true, Peer: -1, Files: []string{path}, Caps: input.Caps{Workers: workers}}
		if err := o.Caps.Checksums.Set(mode); err != nil {
			t.Fatal(err)
		}
		err = Run(o)
		if mode == "verify" {
			outputs[workers] = out.String()
		}
		for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("bad JSON line %q: %v", line, err)
			}
			recs = append(recs, r)
		}
		return recs, err
	}

	recs, err := decode("verify", 1)
	var ee *exit.Error
	if !errors.As(err, &ee) || ee.Code != exit.CodeDamaged || !strings.Contains(err.Error(), "--checksums=off") {
		t.Fatalf("verify: %v, want exit 1 with the --checksums=off hint", err)
	}
	var bad []map[string]any
	for _, r := range recs {
		if r["error"] != nil {
			bad = append(bad, r)
		}
	}
	if len(bad) != 1 {
		t.Fatalf("verify: %d damaged records, want 1: %v", len(bad), bad)
	}
	r := bad[0]
	if r["frame"] != float64(frame) || r["src"] == "invalid AddrPort" || r["raw"] == "" ||
		!strings.Contains(r["error"].(string), "UDP checksum 0x") || !strings.Contains(r["error"].(string), "computed 0x") {
		t.Errorf("verify: damaged record %v", r)
	}

	// With workers the damaged datagram is carried across goroutines: the
	// output must not change.
	if _, err := decode("verify", 2); err == nil || outputs[2] != outputs[1] {
		t.Errorf("--workers 2 prints something else (%v)", err)
	}

	recs, err = decode("off", 1)
	seen := false
	for _, r := range recs {
		if r["frame"] == float64(frame) {
			seen = true
		}
		if e, _ := r["error"].(string); strings.Contains(e, "checksum 0x") {
			t.Errorf("off: checksum error %v", r)
		}
	}
	if !seen {
		t.Errorf("off: frame %d not dissected (exit %v)", frame, err)
	}

	// stats (the session scan) agrees, and takes the flag too.
	for _, mode := range []string{"verify", "off"} {
		var caps input.Caps
		if err := caps.Checksums.Set(mode); err != nil {
			t.Fatal(err)
		}
		err := scanExit(path, caps)
		if mode == "verify" && (!errors.As(err, &ee) || !strings.Contains(err.Error(), "--checksums=off")) {
			t.Errorf("stats --checksums=verify: %v", err)
		}
		if mode == "off" && err != nil && strings.Contains(err.Error(), "checksum") {
			t.Errorf("stats --checksums=off: %v", err)
		}
	}
	if err := new(input.Checksums).Set("on"); err == nil {
		t.Error(`--checksums=on accepted`)
	}
}
