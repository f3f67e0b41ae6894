package live

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		err   error
		kind  error
		words []string
	}{
		{syscall.EPERM, ErrPermission, []string{"CAP_NET_RAW", "eth7", "setcap"}},
		{syscall.EACCES, ErrPermission, []string{"CAP_NET_RAW"}},
		{syscall.ENODEV, ErrNoInterface, []string{"no such interface eth7", "available: "}},
		{syscall.ENXIO, ErrNoInterface, []string{"no such interface eth7"}},
		{syscall.ENETDOWN, ErrInterfaceDown, []string{"eth7 is down", "ip link set eth7 up"}},
		{syscall.EAFNOSUPPORT, ErrUnsupported, []string{"AF_PACKET"}},
		{syscall.EINVAL, nil, []string{"opening", "eth7"}},
	}
	for _, c := range cases {
		err := classify("opening", "eth7", c.err)
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%v: %v is not %v", c.err, err, c.kind)
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%v: the system error is lost from %v", c.err, err)
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", c.err, err, w)
			}
		}
		for _, k := range []error{ErrPermission, ErrNoInterface, ErrInterfaceDown, ErrUnsupported} {
			if k != c.kind && errors.Is(err, k) {
				t.Errorf("%v: %v is also %v", c.err, err, k)
			}
		}
	}
}
