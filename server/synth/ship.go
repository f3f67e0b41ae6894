package synth

import (
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// ship is one player's ship in the simulation: its object id, class and the
// motion and state the StateUpdates report.
type ship struct {
	owner   *player
	id      game.ObjectID
	spec    *game.ShipSpec
	lives   int // respawns so far
	alive   bool
	cloaked bool

	center  dissect.Vec3
	phase   float64
	pos     dissect.Vec3
	vel     dissect.Vec3
	lastAbs dissect.Vec3 // the last absolute position sent; deltas are from it
	updates int          // the owner's StateUpdates sent

	spawnedAt time.Duration
	deck      []game.StateFlags // maneuvers still to fly (see maneuvers)
	motion    game.StateFlags   // the motion fields of the owner's last update

	rr           map[*player]int  // subsystem round-robin position per receiver
	cloakSent    map[*player]bool // cloak state last sent to each receiver
	cloakSentC2S bool
}

// Subsystem object ids sit just above the ship's id in the owner's range.
func (sh *ship) phaser() game.ObjectID  { return sh.id + 0x10 }
func (sh *ship) torpedo() game.ObjectID { return sh.id + 0x20 }

func targetID(enemy *player) game.ObjectID {
	if enemy == nil || enemy.ship == nil {
		return 0
	}
	return enemy.ship.id
}

func (sh *ship) startFiring(enemy *player) game.Message {
	return &game.EventForward{Op: game.OpStartFiring, Event: game.Event{Class: game.EventClassStartFiring,
		Code: game.ETStartFiringNotify, Source: sh.phaser(), Dest: targetID(enemy)}}
}

func (sh *ship) stopFiring() game.Message {
	return &game.EventForward{Op: game.OpStopFiring, Event: game.Event{Class: game.EventClassSubsystem,
		Code: game.ETStopFiringNotify, Source: sh.phaser(), Dest: 0}}
}

func (sh *ship) setPhaserLevel(level uint8) game.Message {
	return &game.EventForward{Op: game.OpSetPhaserLevel, Event: game.Event{Class: game.EventClassChar,
		Code: game.ETSetPhaserLevel, Source: sh.id, Dest: 0, Value: level}}
}

func (sh *ship) subsystemStatus() game.Message {
	return &game.EventForward{Op: game.OpSubsystemStatus, Event: game.Event{Class: game.EventClassSubsystemControl,
		Code: game.ETSubsystemStatusNotify, Source: sh.id + 0x2A, Dest: sh.id, Value: 1}}
}

func (sh *ship) startWarp() game.Message {
	return &game.EventForward{Op: game.OpStartWarp, Event: game.Event{Class: game.EventClassStartWarp,
		Code: game.ETStartWarpNotify, Source: sh.id, Dest: 0, SetName: []byte("Belaruz1"),
		Destination: dissect.Vec3{X: 120, Y: -40, Z: 15}, Speed: 9}}
}

func (sh *ship) beamFire(enemy *player) game.Message {
	m := &game.BeamFire{Object: sh.phaser(), Flags: 0x02, Direction: dissect.Dir3{90, 12, -88}}
	if enemy != nil {
		m.MoreFlags = 1
		m.Target = enemy.ship.id
	}
	return m
}

func (sh *ship) torpedoFire(enemy *player) game.Message {
	m := &game.TorpedoFire{Object: sh.torpedo(), Type: 2, Flags: 0x04, Velocity: dissect.EncodeDir3(sh.vel)}
	if enemy != nil {
		m.Flags = 0x01
		m.Target = enemy.ship.id
		m.TargetPoint = dissect.Contact{Dir: dissect.Dir3{0, -120, 40}, Mag: 0x5C}
	}
	return m
}

func (sh *ship) collision(enemy *player) game.Message {
	return &game.CollisionEffect{Class: game.EventClassCollision, Code: game.ETCollisionEffect,
		Source: targetID(enemy), Target: sh.id,
		Contacts: []dissect.Contact{{Dir: dissect.Dir3{13, 126, 0}, Mag: 217}}, Force: 1281.02}
}
