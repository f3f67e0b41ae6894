package session

import (
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// A created ship's subsystem states, decoded by name, are summed up in the
// session's ship facts and the ship-selected event; undecoded ones say why.
func TestShipSubsystemFacts(t *testing.T) {
	sov := game.ShipByName("Sovereign")
	vals := sov.FullHealth()
	vals[7].Condition = 0x80 // Phasers at 50%
	vals[3].MainBattery = 0  // Warp Core's main battery empty
	states, ok := sov.AppendCreateStates(nil, vals)
	if !ok {
		t.Fatal("no create form for the Sovereign")
	}
	create := func(id game.ObjectID, species uint8, states []byte) []byte {
		b := objCreateTeam(0, 2, id, species, "Cady2")
		return append(b, states...)
	}
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.connect(c, 2)
	h.checksums(c)
	h.lobby(c, 0)
	h.step(time.Second)
	h.deliver(c, s, h.reliable(c, dissect.TypeData, create(game.PlayerObjectID(0), 5, states)))
	h.deliver(c, s, h.reliable(c, dissect.TypeData, create(game.PlayerObjectID(0)+1, 5, states[:20])))
	h.finish()
	ss := h.only()
	if len(ss.Ships) != 2 {
		t.Fatalf("ships %+v", ss.Ships)
	}
	const want = "Warp Core batteries 0%/100%, Phasers 50%; 9 others full"
	if ss.Ships[0].Subsystems != want {
		t.Errorf("ship facts %q, want %q", ss.Ships[0].Subsystems, want)
	}
	if got := ss.Ships[1].Subsystems; !strings.HasPrefix(got, "subsystems undecoded: the bytes end inside the state of") {
		t.Errorf("undecoded ship facts %q", got)
	}
	found := false
	for _, e := range ss.Events {
		if e.Kind == EventShipCreated && strings.HasSuffix(e.Text, "team 2 ("+want+")") {
			found = true
		}
	}
	if !found {
		t.Errorf("no ship-selected event with the summary: %+v", ss.Events)
	}
}
