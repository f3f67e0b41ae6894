package diff

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// The replay verifier compares a decoded message with the one it expected
// under the diff's tolerances: game time and names may differ, object ids
// may sit in another player's block, the checksum directory may not.
func ExampleRules_CompareGame() {
	r := DefaultRules()
	stock := &game.Settings{GameTime: 77.1, CollisionDamage: true, PlayerSlot: 0, Map: "Multiplayer.Episode.Mission1.Mission1"}
	ours := &game.Settings{GameTime: 12.5, CollisionDamage: true, PlayerSlot: 0, Map: "Multiplayer.Episode.Mission1.Mission1"}
	fmt.Println(len(r.CompareGame(ours, stock)), "differences in Settings")

	a := &game.ChecksumRequest{Round: 2, Dir: "scripts/ships", Filter: "*.pyc", Recursive: true}
	b := &game.ChecksumRequest{Round: 2, Dir: "scripts/Ships", Filter: "*.pyc", Recursive: false}
	for _, d := range r.CompareGame(b, a) {
		fmt.Println(d)
	}
	// Output:
	// 0 differences in Settings
	// ChecksumRequest.dir: ours "scripts/Ships", stock "scripts/ships"
	// ChecksumRequest.recursive: ours false, stock true
}

func TestCompareGameTolerances(t *testing.T) {
	r := DefaultRules()
	// The same ship of the player in slot 0 and in slot 2.
	a := &game.ObjCreate{HasTeam: true, Owner: 0, Class: game.ClassShip, Object: game.PlayerObjectID(0), Species: 3,
		PlayerName: "Cady2", SetName: "Multi1", Position: dissect.Vec3{X: 1}}
	b := &game.ObjCreate{HasTeam: true, Owner: 0, Class: game.ClassShip, Object: game.PlayerObjectID(2), Species: 3,
		PlayerName: "Worf", SetName: "Multi1", Position: dissect.Vec3{X: 9}}
	if d := r.CompareGame(a, b); len(d) != 0 {
		t.Errorf("tolerated fields differ: %v", d)
	}
	b.Object = game.PlayerObjectID(2) + 1
	if d := r.CompareGame(a, b); len(d) != 1 || d[0].Path != "ObjCreateTeam.object" {
		t.Errorf("object at another offset: %v", d)
	}
	r.ObjectIDsBySlot = false
	b.Object = game.PlayerObjectID(2)
	if d := r.CompareGame(a, b); len(d) != 1 {
		t.Errorf("strict object ids: %v", d)
	}
	r = DefaultRules()
	r.Strict("*.player_name")
	if d := r.CompareGame(a, b); len(d) != 1 || d[0].Path != "ObjCreateTeam.player_name" {
		t.Errorf("names compared again: %v", d)
	}
	if d := r.CompareGame(a, &game.GameInit{}); len(d) != 1 || d[0].Path != "opcode" {
		t.Errorf("different opcodes: %v", d)
	}
	// Floats within the relative tolerance are equal.
	s1, s2 := &game.Settings{GameTime: 1}, &game.Settings{GameTime: 1}
	r.Strict("*.game_time")
	s2.GameTime = 1.00001
	if d := r.CompareGame(s1, s2); len(d) != 0 {
		t.Errorf("float tolerance: %v", d)
	}
	s2.GameTime = 2
	if d := r.CompareGame(s1, s2); len(d) != 1 {
		t.Errorf("game time compared: %v", d)
	}
}

func TestCompareControl(t *testing.T) {
	r := DefaultRules()
	slot, other := uint8(2), uint8(3)
	a := &dissect.Control{Kind: "peer-info", Slot: &slot, Addr: netip.MustParseAddr("10.0.1.10"), Name: "Cady2"}
	b := &dissect.Control{Kind: "peer-info", Slot: &slot, Addr: netip.MustParseAddr("192.168.1.5"), Name: "Picard"}
	if d := r.CompareControl(a, b); len(d) != 0 {
		t.Errorf("address and name are tolerated: %v", d)
	}
	b.Slot = &other
	if d := r.CompareControl(a, b); len(d) != 1 || d[0].Path != "peer-info.slot" {
		t.Errorf("slot: %v", d)
	}
	r.Strict("*.ip")
	if d := r.CompareControl(a, b); len(d) != 2 {
		t.Errorf("address compared again: %v", d)
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "rules.json")
	os.WriteFile(p, []byte(`{"ignore": ["Settings.map"], "compare": ["*.player_name"], "latency": "250ms",
		"rate_ratio": 2, "severity": {"bundling": "minor"}}`), 0o644)
	r, err := LoadRules(p)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Ignored("Settings.map") || !r.Ignored("Settings.game_time") || r.Ignored("ObjCreate.player_name") {
		t.Errorf("ignore list %v", r.Ignore)
	}
	if time.Duration(r.Latency) != 250*time.Millisecond || r.RateRatio != 2 || r.Severity["bundling"] != Minor || r.Alpha != 0.001 {
		t.Errorf("rules %+v", r)
	}
	for _, bad := range []string{`{"latency": "soon"}`, `{"rate_ratio": 0.5}`, `{"severity": {"x": "awful"}}`, `{"unknown": 1}`, `{"ignore": ["[x"]}`} {
		if _, err := ParseRules([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := LoadRules(filepath.Join(dir, "none.json")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestIgnoredCoversFieldsBelow(t *testing.T) {
	r := DefaultRules()
	for _, p := range []string{"ObjCreateTeam.position.x", "ObjCreate.position", "Settings.game_time", "peer-info.ip"} {
		if !r.Ignored(p) {
			t.Errorf("%s not ignored", p)
		}
	}
	for _, p := range []string{"ObjCreateTeam.species", "Settings.map", "ChecksumRequest.dir"} {
		if r.Ignored(p) {
			t.Errorf("%s ignored", p)
		}
	}
}

func TestSeverity(t *testing.T) {
	for i, n := range []string{"info", "minor", "MAJOR", "critical"} {
		s, err := ParseSeverity(n)
		if err != nil || int(s) != i || !strings.EqualFold(s.String(), n) {
			t.Errorf("%s: %v %v", n, s, err)
		}
	}
	if _, err := ParseSeverity("fatal"); err == nil {
		t.Error("fatal: no error")
	}
}
