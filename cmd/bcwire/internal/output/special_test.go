package output

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// -w /dev/null, -w to a named pipe Wireshark reads: the target is written
// where it is. (Before, the temporary file was renamed over it, and
// `bcwire decode -w /dev/null` replaced the system's null device with a
// regular file.)

func TestCreateWritesANamedPipeInPlace(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "wireshark.pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		r, err := os.Open(fifo) // waits for the writer
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- b
	}()
	// Check must not read the pipe (it would wait for a writer forever).
	done := make(chan error, 1)
	go func() { done <- (Target{Flag: "-o", Path: fifo, Document: true}).Check() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Check of a named pipe did not return: it reads the pipe")
	}
	if err := WriteFile(fifo, nil, func(w io.Writer) error {
		_, err := w.Write([]byte("pcap bytes"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if string(b) != "pcap bytes" {
			t.Errorf("the reader of the pipe got %q", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the reader of the pipe got nothing")
	}
	assertMode(t, fifo, os.ModeNamedPipe)
	assertNoPartials(t, filepath.Dir(fifo))
}

func TestCreateWritesADeviceInPlace(t *testing.T) {
	null := filepath.Join(t.TempDir(), "null")
	// The null device's numbers on Linux (1, 3); making it needs root.
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		t.Skipf("cannot make a device node here (needs root): %v", err)
	}
	for _, abort := range []bool{false, true} {
		f, err := Create(null)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		if abort {
			f.Abort() // must not remove the device
		} else if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		assertMode(t, null, os.ModeDevice|os.ModeCharDevice)
	}
	assertNoPartials(t, filepath.Dir(null))
}

func TestCreateFollowsALinkToAFile(t *testing.T) {
	dir := t.TempDir()
	file, link := filepath.Join(dir, "real.pcap"), filepath.Join(dir, "link.pcap")
	os.WriteFile(file, []byte("old"), 0o644)
	if err := os.Symlink("real.pcap", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, nil, func(w io.Writer) error {
		_, err := w.Write([]byte("new"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "new" {
		t.Errorf("the file the link names holds %q, want %q", b, "new")
	}
	assertMode(t, link, os.ModeSymlink)
	// A failed run leaves the file as it was.
	failed := errors.New("failed")
	if err := WriteFile(link, nil, func(w io.Writer) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("WriteFile: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "new" {
		t.Errorf("after a failed run the file holds %q", b)
	}
	assertNoPartials(t, dir)
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Type() != want {
		t.Errorf("%s is now %v, want %v (replaced by a regular file?)", path, st.Mode().Type(), want)
	}
}

func assertNoPartials(t *testing.T, dir string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, ".*.partial"))
	if len(m) > 0 {
		t.Errorf("temporary files left: %v", m)
	}
}
