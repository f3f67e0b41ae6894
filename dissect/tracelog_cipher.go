package dissect

import "github.com/bcwire/bcwire/dissect/capture"

// A packet_trace.log holds game datagrams decrypted; package capture hands
// them out as they were on the wire, for which it needs the cipher, which
// it cannot import (this package imports it).
func init() { capture.RegisterCipher(Encrypt) }
