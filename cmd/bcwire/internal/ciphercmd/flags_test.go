package ciphercmd

import (
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdCipher(nil, func(o *Options) error { got = o; return nil })
	if err := flagtest.ParseOnly(cmd, "encrypt", "01", "02:03"); err != nil {
		t.Fatal(err)
	}
	if !got.Encrypt || got.Hex != "01 02:03" {
		t.Errorf("options %+v", got)
	}
}
