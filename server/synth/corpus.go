package synth

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

// CorpusEntry is one capture of the bundled test corpus (testdata/pcaps).
type CorpusEntry struct {
	Name   string
	Config Config
	Format capture.Format
	Link   capture.LinkType
	// Damaged entries get three kinds of damage after generation: a
	// truncated packet, a garbage datagram and a message with a bad length.
	Damaged bool
}

// Corpus is the bundled set. The files are generated from it; a test checks
// that the committed files still match byte for byte.
var Corpus = []CorpusEntry{
	{Name: "join.pcap", Config: Config{Players: 1, Duration: 10 * time.Second, Seed: 1}, Format: capture.PCAP, Link: capture.Ethernet},
	{Name: "battle.pcap", Config: Config{Players: 4, Duration: 60 * time.Second, Seed: 1}, Format: capture.PCAP, Link: capture.Ethernet},
	{Name: "lossy.pcap", Config: Config{Players: 3, Duration: 30 * time.Second, Seed: 2, Loss: 0.05}, Format: capture.PCAP, Link: capture.Ethernet},
	{Name: "duel.pcapng", Config: Config{Players: 2, Duration: 20 * time.Second, Seed: 3}, Format: capture.PCAPNG, Link: capture.Ethernet},
	{Name: "sll.pcap", Config: Config{Players: 2, Duration: 15 * time.Second, Seed: 4}, Format: capture.PCAP, Link: capture.LinuxSLL},
	{Name: "damaged.pcap", Config: Config{Players: 2, Duration: 12 * time.Second, Seed: 5}, Format: capture.PCAP, Link: capture.Ethernet, Damaged: true},
}

// Build generates the entry's capture. For a damaged entry the manifest
// describes the capture before the damage.
func (e CorpusEntry) Build() ([]byte, Manifest, error) {
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, e.Format, e.Link)
	if err != nil {
		return nil, Manifest{}, err
	}
	m, err := Generate(e.Config, w)
	if err != nil || !e.Damaged {
		return buf.Bytes(), m, err
	}
	out, err := damage(buf.Bytes(), e.Format, e.Link)
	return out, m, err
}

// Where the damage goes (packet numbers of the undamaged capture).
const (
	truncateAfter = 30
	garbageAfter  = 60
	badLengthAt   = 90
)

// damage copies a capture, adding a truncated packet after packet 30, a
// garbage datagram after packet 60 and replacing packet 90 with a copy
// whose first message claims a length past the end of the datagram.
func damage(in []byte, format capture.Format, link capture.LinkType) ([]byte, error) {
	rd, err := capture.NewReader(bytes.NewReader(in))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	w, err := capture.NewWriter(&out, format, link)
	if err != nil {
		return nil, err
	}
	n := 0
	for {
		p, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		n++
		payload := p.Payload
		if n == badLengthAt && !dissect.IsGameSpy(payload) {
			plain := make([]byte, len(payload))
			dissect.Decrypt(plain, payload)
			if len(plain) >= 5 && plain[2] != byte(dissect.TypeAck) {
				fl := binary.LittleEndian.Uint16(plain[3:]) | 0x0FFF // a length far past the end
				binary.LittleEndian.PutUint16(plain[3:], fl&^0x2000)
				payload = make([]byte, len(plain))
				dissect.Encrypt(payload, plain)
			}
		}
		if err := w.WriteUDP(p.Time, p.Src, p.Dst, payload); err != nil {
			return nil, err
		}
		at := p.Time.Add(time.Microsecond)
		switch n {
		case truncateAfter:
			// An Ethernet frame whose IPv4 header is cut after four bytes.
			frame := []byte{0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0x00, 0x00, 0x40}
			if link != capture.Ethernet {
				return nil, fmt.Errorf("damage: truncated packet needs an Ethernet capture")
			}
			if err := w.WriteRaw(at, frame); err != nil {
				return nil, err
			}
		case garbageAfter:
			// 40 bytes of noise sent to the server from the same client.
			garbage := make([]byte, 40)
			x := uint32(2463534242)
			for i := range garbage {
				x ^= x << 13
				x ^= x >> 17
				x ^= x << 5
				garbage[i] = byte(x)
			}
			src, dst := p.Src, p.Dst
			if src.Port() == DefaultServer.Port() {
				src, dst = dst, src
			}
			garbage[0] = 0x02 // a client's peer id: the flow is Bridge Commander traffic
			if err := w.WriteUDP(at, src, dst, garbage); err != nil {
				return nil, err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
