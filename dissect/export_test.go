package dissect

import (
	"fmt"
	"reflect"
)

// CompareParse splits b with Datagram.Parse, into a Datagram that held
// other messages before, and with the reference splitter, and says how
// they differ ("" when they do not).
func CompareParse(b []byte) string {
	var got Datagram
	// Stale messages in the reused storage must not leak into the result.
	_ = got.Parse([]byte{0xAA, 3, 0x01, 0x05, 0x00, 0x03, 0x32, 0x05, 0x80, 0x07, 0x00, 0x00, 0x07, 0x00})
	for i := range got.Messages[:cap(got.Messages)] {
		got.Messages[:cap(got.Messages)][i] = Message{Offset: 99, Raw: b, Type: 0x77, Reliable: true, Ordered: true,
			Fragment: true, FragIndex: 9, FragTotal: 9, Seq: 9, Payload: b, AckFlags: 9, AckFragIndex: 9, Legacy: true, LegacyFlags: 9}
	}
	gotErr := got.Parse(b)
	var want Datagram
	wantErr := refParse(&want, b)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		return fmt.Sprintf("error %v, reference %v", gotErr, wantErr)
	}
	if got.Peer != want.Peer || got.Count != want.Count || len(got.Messages) != len(want.Messages) {
		return fmt.Sprintf("header %d/%d %d messages, reference %d/%d %d messages",
			got.Peer, got.Count, len(got.Messages), want.Peer, want.Count, len(want.Messages))
	}
	for i := range got.Messages {
		g, w := got.Messages[i], want.Messages[i]
		if !reflect.DeepEqual(g, w) || cap(g.Raw) != cap(w.Raw) || cap(g.Payload) != cap(w.Payload) {
			return fmt.Sprintf("message %d = %+v, reference %+v", i, g, w)
		}
	}
	return ""
}
