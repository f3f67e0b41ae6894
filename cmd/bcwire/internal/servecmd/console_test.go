package servecmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/server/native"
)

// repeatReader is n bytes of b, streamed.
type repeatReader struct {
	b byte
	n int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	for i := range p {
		p[i] = r.b
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// Issue 34.6: a console line of 64 KiB or more stopped the console
// silently (bufio.Scanner's "token too long"), and quit was ignored after
// it. Now such a line is refused with a message and the console goes on;
// one byte shorter is a command like any other.
func TestConsoleRefusesLongLines(t *testing.T) {
	srv, err := native.New(native.Options{Config: native.DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	in := io.MultiReader(
		strings.NewReader("players\n"),
		&repeatReader{'a', maxConsoleLine - 1}, strings.NewReader("\n"), // the longest line read
		&repeatReader{'b', maxConsoleLine}, strings.NewReader("\n"), // the shortest refused
		&repeatReader{'c', 100 << 20}, strings.NewReader("\r\n"), // 100 MiB, streamed
		strings.NewReader("players\nquit\nplayers\n"))
	var out bytes.Buffer
	quit := false
	console(context.Background(), &out, srv, in, func() { quit = true })
	if !quit {
		t.Fatalf("quit was not acted on after the long lines; output:\n%.500s", out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"no clients",
		`error: unknown command "aaaa`,
		"error: console line of 65536 bytes refused (at most 65535)",
		"error: console line of 104857600 bytes refused (at most 65535)",
		"no clients",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines of output, want %d (nothing after quit):\n%.2000s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %.100q, want %q", i, lines[i], w)
		}
	}
}
