package replay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
)

// zeroReader is n zero bytes, made as they are read.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), z.n))
	clear(p[:k])
	z.n -= int64(k)
	return k, nil
}

func battleHeader(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/pcaps/battle.pcap")
	if err != nil {
		t.Fatal(err)
	}
	return b[:24]
}

// A header and zeros (each 16 bytes an unreadable record) load with the
// damage counted and the first KeptDamage kept: 100 MB of them held 1.2 GB
// and died. The capture's own give-up is off here, so that what is shown
// is the replay's bound: 512 Ki damaged records keep the heap small.
func TestLoadDamageBounded(t *testing.T) {
	const records = 512 << 10
	in := io.MultiReader(bytes.NewReader(battleHeader(t)), &zeroReader{records * 16})
	c, err := Read(in, LoadOptions{Capture: capture.Options{MaxUnreadable: -1}})
	if !errors.Is(err, ErrNoSessions) {
		t.Fatalf("error %v, want ErrNoSessions", err)
	}
	if c == nil || c.DamageCount != records || c.Damaged != records || len(c.Damage) != KeptDamage {
		t.Fatalf("damage counted %d (%d unreadable), kept %d", c.DamageCount, c.Damaged, len(c.Damage))
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > 32<<20 {
		t.Errorf("live heap %d MiB after loading, holding the capture", ms.HeapAlloc>>20)
	}
	if r := c.DamageReport(); r.Records != records || len(r.First) != firstDamage {
		t.Errorf("report %+v", r)
	}
	runtime.KeepAlive(c)
}

// With the capture's give-up (16 MiB by default, 1 MiB here to keep the
// test short), the same input stops there and says there is no session.
func TestLoadZerosNoSession(t *testing.T) {
	const span = 1 << 20
	in := io.MultiReader(bytes.NewReader(battleHeader(t)), &zeroReader{1 << 30})
	c, err := Read(in, LoadOptions{Capture: capture.Options{MaxUnreadable: span}})
	if !errors.Is(err, ErrNoSessions) {
		t.Fatalf("error %v, want ErrNoSessions", err)
	}
	if want := span/16 + 2; c.DamageCount > want || c.Damaged != c.DamageCount {
		t.Errorf("%d damaged records (%d unreadable), want at most %d", c.DamageCount, c.Damaged, want)
	}
}

// Loading stops at once when interrupted, even while no datagram is found.
func TestLoadInterrupted(t *testing.T) {
	done := make(chan struct{})
	close(done)
	in := io.MultiReader(bytes.NewReader(battleHeader(t)), &zeroReader{1 << 30})
	if _, err := Read(in, LoadOptions{Interrupt: done}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want ErrInterrupted", err)
	}
	if _, err := Load("../../testdata/pcaps/battle.pcap", LoadOptions{Interrupt: done}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Load: error %v, want ErrInterrupted", err)
	}
}

// Scripts past MaxBytes stop loading with ErrTooLarge.
func TestLoadMaxBytes(t *testing.T) {
	if _, err := Load("../../testdata/pcaps/battle.pcap", LoadOptions{MaxBytes: 64 << 10}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
	if _, err := Load("../../testdata/pcaps/battle.pcap", LoadOptions{}); err != nil {
		t.Fatal(err)
	}
}
