package game

import (
	"encoding/json"
	"testing"
)

func TestEventCodeNames(t *testing.T) {
	cases := []struct {
		c    EventCode
		name string
	}{
		{0x008000D7, "ET_START_FIRING"},
		{0x008000D8, "ET_START_FIRING_NOTIFY"},
		{0x00800050, "ET_COLLISION_EFFECT"},
		{0x008000FC, "ET_HOST_COLLISION_EFFECT"},
		{0x0080007C, "ET_WEAPON_FIRED"},
		{0x00060001, "ET_NETWORK_MESSAGE_EVENT"},
		{0x00801234, "0x00801234"},
	}
	for _, c := range cases {
		evWant(t, "String", c.c.String(), c.name)
	}
	j, _ := json.Marshal(ETStartFiring)
	evWant(t, "json", string(j), `{"code":"0x008000D7","name":"ET_START_FIRING"}`)
	j, _ = json.Marshal(EventCode(0x00801234))
	evWant(t, "json unknown", string(j), `{"code":"0x00801234"}`)
	j, _ = json.Marshal(EventClassObjPtr)
	evWant(t, "class json", string(j), `{"id":"0x0000010C","name":"TGObjPtrEvent"}`)
	evWant(t, "unknown class", EventClass(0x77).String(), "class(0x00000077)")
}

// Every sender code seeds/001 pairs with a receiver code has a name, and so
// does its receiver.
func TestEventCodePairsNamed(t *testing.T) {
	pairs := [][2]EventCode{{0xD8, 0xD7}, {0xDA, 0xD9}, {0xDC, 0xDB}, {0xDD, 0x6C}, {0xE0, 0xE1},
		{0xE2, 0xE3}, {0xE4, 0xE5}, {0xEC, 0xED}, {0xFE, 0xFD}}
	for _, p := range pairs {
		for _, c := range p {
			if (0x00800000 | c).Name() == "" {
				t.Errorf("%#08x has no name", uint32(0x00800000|c))
			}
		}
	}
}

func TestEventClassKnownMatchesNames(t *testing.T) {
	for c := range eventClassNames {
		if !c.Known() {
			t.Errorf("%v named but not Known", c)
		}
	}
	if EventClass(0x8125).Known() {
		t.Error("0x8125 Known")
	}
}
