package root

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
)

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = ExecuteIO(&iostreams.IOStreams{Out: &out, Err: &errb}, args)
	return out.String(), errb.String(), code
}

const connectReply = "01 02 03 06 C0 00 00 02 32 1B 80 00 00 20 00 08 00 73 63 72 69 70 74 73 2F 07 00 41 70 70 2E 70 79 63 20"

func TestCipherCommands(t *testing.T) {
	out, _, code := run(t, "cipher", "encrypt", "01:01:32:0F:80:01:00:2C:02:00:00:00:05:00:68:65:6C:6C:6F")
	if code != 0 || strings.TrimSpace(out) != "01D702DC77BC1E20B7601304FACCB1280E4476" {
		t.Fatalf("encrypt: %q (exit %d)", out, code)
	}
	out, _, code = run(t, "cipher", "decrypt", "01D6FE17F186")
	if code != 0 || strings.TrimSpace(out) != "010000000000" {
		t.Fatalf("decrypt: %q (exit %d)", out, code)
	}
	if _, errs, code := run(t, "cipher", "decrypt", "0xZZ"); code != 2 || !strings.Contains(errs, "not a hex digit") {
		t.Fatalf("bad hex: exit %d, %q", code, errs)
	}
}

func TestDecodeHexPlainAndEncrypted(t *testing.T) {
	out, _, code := run(t, "decode", "--plain", "--hex", connectReply)
	if code != 0 || !strings.Contains(out, "slot-assignment slot=2") || !strings.Contains(out, `ChecksumRequest round=0 dir="scripts/" filter="App.pyc" recursive=false`) {
		t.Fatalf("plain: exit %d\n%s", code, out)
	}
	b, _ := hexBytes(connectReply)
	dissect.Encrypt(b, b)
	enc, _, code := run(t, "decode", "--hex", strings.ToUpper(bytesHex(b)))
	if code != 0 || enc != out {
		t.Fatalf("encrypted form decodes differently (exit %d):\n%s\nvs\n%s", code, enc, out)
	}
}

func TestDecodeExitStatuses(t *testing.T) {
	// A datagram whose second message runs past the end: damaged, exit 1,
	// the good message still printed.
	out, _, code := run(t, "decode", "--plain", "--hex", "01 02 01 00 00 02 32 FF 80 00")
	if code != 1 || !strings.Contains(out, "ack seq=0") || !strings.Contains(out, "DAMAGED") {
		t.Fatalf("damaged: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"decode"},
		{"decode", "--dir", "sideways", "x.pcap"},
		{"decode", "--opcode", "NoSuchThing", "x.pcap"},
		{"decode", "--hex", "abc"},
		{"decode", "/nonexistent/file.pcap"},
		{"decode", "--bogus-flag"},
	} {
		if _, errs, code := run(t, args...); code != 2 || errs == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
}

// writeCapture builds a small capture: the stock connect reply and a chat
// relayed to a second client.
func writeCapture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "small.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewWriter(f, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	srv := netip.MustParseAddrPort("10.0.0.1:22101")
	c1 := netip.MustParseAddrPort("10.0.1.10:50000")
	c2 := netip.MustParseAddrPort("10.0.1.11:50007")
	at := time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)
	send := func(src, dst netip.AddrPort, plain []byte) {
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		at = at.Add(50 * time.Millisecond)
		if err := w.WriteUDP(at, src, dst, wire); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := hexBytes(connectReply)
	send(srv, c1, b)
	chat := (&game.Chat{Op: game.OpChat, SenderID: 2, Text: "gg"}).Append(nil)
	send(c1, srv, (&dissect.Datagram{Peer: 2, Messages: []dissect.Message{{Type: dissect.TypeData, Reliable: true, Seq: 7, Payload: chat}}}).Append(nil))
	send(srv, c2, (&dissect.Datagram{Peer: 1, Messages: []dissect.Message{{Type: dissect.TypeData, Reliable: true, Seq: 3, Payload: chat}}}).Append(nil))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func TestDecodeJSONKeysAndFilters(t *testing.T) {
	path := writeCapture(t)
	out, errs, code := run(t, "decode", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), out)
	}
	var first, chat map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[2]), &chat)
	for _, k := range []string{"frame", "time", "src", "dst", "dir", "peer", "msg", "type", "reliable", "seq"} {
		if _, ok := first[k]; !ok {
			t.Errorf("key %q missing from %s", k, lines[0])
		}
	}
	if first["frame"].(float64) != 1 || first["dir"] != "S->C" || first["src"] != "10.0.0.1:22101" || first["type"].(float64) != 3 {
		t.Errorf("first line: %s", lines[0])
	}
	if chat["opcode"].(float64) != 0x2C || chat["name"] != "CHAT" || chat["dir"] != "C->S" {
		t.Errorf("chat line: %s", lines[2])
	}
	if f, ok := chat["fields"].(map[string]any); !ok || f["text"] != "gg" {
		t.Errorf("chat fields: %s", lines[2])
	}
	if _, err := time.Parse(time.RFC3339Nano, first["time"].(string)); err != nil {
		t.Errorf("time: %v", err)
	}
	// Filters.
	out, _, _ = run(t, "decode", "--opcode", "chat", "--dir", "S->C", path)
	if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, "10.0.1.11:50007") {
		t.Errorf("--opcode chat --dir S->C:\n%s", out)
	}
	out, _, _ = run(t, "decode", "--peer", "2", path)
	if n := strings.Count(out, "\n"); n != 1 {
		t.Errorf("--peer 2:\n%s", out)
	}
	// -c counts packets read, as tshark's: frame 1 holds two messages.
	out, _, _ = run(t, "decode", "-c", "2", path)
	if n := strings.Count(out, "\n"); n != 3 || strings.Contains(out, "10.0.1.11:50007") {
		t.Errorf("-c 2:\n%s", out)
	}
	// ... in all the files together: 3 packets of the first, 1 of the second.
	out, errs, _ = run(t, "decode", "-c", "4", path, path)
	if n := strings.Count(out, "\n"); n != 6 || !strings.Contains(errs, ": 3 records") || !strings.Contains(errs, ": 1 records") {
		t.Errorf("-c 4 over two files:\n%s%s", out, errs)
	}
	out, _, _ = run(t, "decode", "--opcode", "chat", "-c", "1", path)
	if out != "" {
		t.Errorf("--opcode chat -c 1: the first packet holds no chat:\n%s", out)
	}
	out, _, _ = run(t, "decode", "-V", "--opcode", "0x2C", "-c", "2", path)
	if !strings.Contains(out, `text: "gg"`) {
		t.Errorf("-V:\n%s", out)
	}
}

func hexBytes(s string) ([]byte, error) {
	s = strings.NewReplacer(" ", "").Replace(s)
	b := make([]byte, len(s)/2)
	for i := range b {
		var v byte
		for _, c := range s[2*i : 2*i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			default:
				v |= byte(c-'A') + 10
			}
		}
		b[i] = v
	}
	return b, nil
}

func bytesHex(b []byte) string {
	const digits = "0123456789ABCDEF"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
