package game

// EventCode is the 32-bit event type of a TGEvent: what happened. Engine
// events are 0x00800000 (ET_TEMP_TYPE) plus an offset; the network layer's
// own events are 0x0006xxxx. Serialized events carry the code on the wire
// (PythonEvent, the event-forward opcodes, CollisionEffect).
type EventCode uint32

// Event codes the sources name. Where a source gives only a description, the
// name follows the engine's ET_ naming and the comment says so.
const (
	ETNetworkMessageEvent EventCode = 0x00060001 // incoming network message (TGMessageEvent)
	ETNetworkConnectEvent EventCode = 0x00060002 // host session created
	ETNetworkNewPlayer    EventCode = 0x00060004 // new peer connected
	// ETNetworkPlayerRemoved is the "player removed" notification that
	// DeletePlayerUI (0x17) carries at disconnect (descriptive name).
	ETNetworkPlayerRemoved EventCode = 0x00060005
	// ETNetworkNameChange is fired when a peer's name changes (seeds/004;
	// descriptive name; seeds/002's tentative "new player" for this code is
	// superseded by 0x00060004).
	ETNetworkNameChange EventCode = 0x00060007

	ETSetPlayer       EventCode = 0x0080000E
	ETCreateServer    EventCode = 0x0080004A
	ETObjectExploding EventCode = 0x0080004E
	ETCollisionEffect EventCode = 0x00800050
	// ETStart is named "application start" by the OpenBC engine reference;
	// seeds/001 notes the host also posts this code for collision
	// sound/visual effects after a HostCollisionEffect.
	ETStart                    EventCode = 0x00800053
	ETTargetWasChanged         EventCode = 0x00800058
	ETReloadTorpedo            EventCode = 0x00800065
	ETTorpedoFired             EventCode = 0x00800066
	ETAmmoTypeChanged          EventCode = 0x00800067
	ETAmmoSwitchStarted        EventCode = 0x00800068
	ETSubsystemHit             EventCode = 0x0080006B
	ETSubsystemStatus          EventCode = 0x0080006C
	ETRepairCompleted          EventCode = 0x00800074
	ETRepairCannotBeCompleted  EventCode = 0x00800075
	ETRepairIncreasePriority   EventCode = 0x00800076
	ETWeaponFired              EventCode = 0x0080007C
	ETTractorBeamStartedFiring EventCode = 0x0080007D
	ETTractorBeamStoppedFiring EventCode = 0x0080007F
	ETPhaserStartedFiring      EventCode = 0x00800081
	ETPhaserStoppedFiring      EventCode = 0x00800083
	ETTractorTargetDocked      EventCode = 0x00800085
	ETSensorsShipIdentified    EventCode = 0x00800088
	ETObjectCreatedNotify      EventCode = 0x008000C8
	ETStartFiring              EventCode = 0x008000D7 // receiver side of 0x07
	ETStartFiringNotify        EventCode = 0x008000D8 // sender side of 0x07
	ETStopFiring               EventCode = 0x008000D9 // receiver side of 0x08
	ETStopFiringNotify         EventCode = 0x008000DA // sender side of 0x08
	ETStopFiringAtTarget       EventCode = 0x008000DB // receiver side of 0x09
	ETStopFiringAtTargetNotify EventCode = 0x008000DC // sender side of 0x09
	ETSubsystemStatusNotify    EventCode = 0x008000DD // sender side of 0x0A per seeds/001's DD→6C pairing (descriptive name)
	ETAddToRepairList          EventCode = 0x008000DF
	ETSetPhaserLevel           EventCode = 0x008000E0 // 0x12, same code on both sides (descriptive name)
	ETRepairListPriority       EventCode = 0x008000E1 // seeds/001's receiver code for 0x11 (descriptive name)
	ETStartCloakingNotify      EventCode = 0x008000E2
	ETStartCloaking            EventCode = 0x008000E3
	ETStopCloakingNotify       EventCode = 0x008000E4
	ETStopCloaking             EventCode = 0x008000E5
	ETSystemChecksumFailed     EventCode = 0x008000E7
	ETChecksumComplete         EventCode = 0x008000E8
	ETKillGame                 EventCode = 0x008000E9
	ETStartWarpNotify          EventCode = 0x008000EC // sender side of 0x10 (descriptive name)
	ETStartWarp                EventCode = 0x008000ED // receiver side of 0x10 (descriptive name)
	ETNewPlayerInGame          EventCode = 0x008000F1
	ETBootPlayer               EventCode = 0x008000F6
	ETHostCollisionEffect      EventCode = 0x008000FC // the host re-posts a client's 0x15 with this code
	ETTorpTypeChanged          EventCode = 0x008000FD // receiver side of 0x1B (descriptive name)
	ETTorpTypeChange           EventCode = 0x008000FE // sender side of 0x1B
)

var eventCodeNames = map[EventCode]string{
	ETNetworkMessageEvent:      "ET_NETWORK_MESSAGE_EVENT",
	ETNetworkConnectEvent:      "ET_NETWORK_CONNECT_EVENT",
	ETNetworkNewPlayer:         "ET_NETWORK_NEW_PLAYER",
	ETNetworkPlayerRemoved:     "ET_NETWORK_PLAYER_REMOVED",
	ETNetworkNameChange:        "ET_NETWORK_NAME_CHANGE",
	ETSetPlayer:                "ET_SET_PLAYER",
	ETCreateServer:             "ET_CREATE_SERVER",
	ETObjectExploding:          "ET_OBJECT_EXPLODING",
	ETCollisionEffect:          "ET_COLLISION_EFFECT",
	ETStart:                    "ET_START",
	ETTargetWasChanged:         "ET_TARGET_WAS_CHANGED",
	ETReloadTorpedo:            "ET_RELOAD_TORPEDO",
	ETTorpedoFired:             "ET_TORPEDO_FIRED",
	ETAmmoTypeChanged:          "ET_AMMO_TYPE_CHANGED",
	ETAmmoSwitchStarted:        "ET_AMMO_SWITCH_STARTED",
	ETSubsystemHit:             "ET_SUBSYSTEM_HIT",
	ETSubsystemStatus:          "ET_SUBSYSTEM_STATUS",
	ETRepairCompleted:          "ET_REPAIR_COMPLETED",
	ETRepairCannotBeCompleted:  "ET_REPAIR_CANNOT_BE_COMPLETED",
	ETRepairIncreasePriority:   "ET_REPAIR_INCREASE_PRIORITY",
	ETWeaponFired:              "ET_WEAPON_FIRED",
	ETTractorBeamStartedFiring: "ET_TRACTOR_BEAM_STARTED_FIRING",
	ETTractorBeamStoppedFiring: "ET_TRACTOR_BEAM_STOPPED_FIRING",
	ETPhaserStartedFiring:      "ET_PHASER_STARTED_FIRING",
	ETPhaserStoppedFiring:      "ET_PHASER_STOPPED_FIRING",
	ETTractorTargetDocked:      "ET_TRACTOR_TARGET_DOCKED",
	ETSensorsShipIdentified:    "ET_SENSORS_SHIP_IDENTIFIED",
	ETObjectCreatedNotify:      "ET_OBJECT_CREATED_NOTIFY",
	ETStartFiring:              "ET_START_FIRING",
	ETStartFiringNotify:        "ET_START_FIRING_NOTIFY",
	ETStopFiring:               "ET_STOP_FIRING",
	ETStopFiringNotify:         "ET_STOP_FIRING_NOTIFY",
	ETStopFiringAtTarget:       "ET_STOP_FIRING_AT_TARGET",
	ETStopFiringAtTargetNotify: "ET_STOP_FIRING_AT_TARGET_NOTIFY",
	ETSubsystemStatusNotify:    "ET_SUBSYSTEM_STATUS_NOTIFY",
	ETAddToRepairList:          "ET_ADD_TO_REPAIR_LIST",
	ETSetPhaserLevel:           "ET_SET_PHASER_LEVEL",
	ETRepairListPriority:       "ET_REPAIR_LIST_PRIORITY",
	ETStartCloakingNotify:      "ET_START_CLOAKING_NOTIFY",
	ETStartCloaking:            "ET_START_CLOAKING",
	ETStopCloakingNotify:       "ET_STOP_CLOAKING_NOTIFY",
	ETStopCloaking:             "ET_STOP_CLOAKING",
	ETSystemChecksumFailed:     "ET_SYSTEM_CHECKSUM_FAILED",
	ETChecksumComplete:         "ET_CHECKSUM_COMPLETE",
	ETKillGame:                 "ET_KILL_GAME",
	ETStartWarpNotify:          "ET_START_WARP_NOTIFY",
	ETStartWarp:                "ET_START_WARP",
	ETNewPlayerInGame:          "ET_NEW_PLAYER_IN_GAME",
	ETBootPlayer:               "ET_BOOT_PLAYER",
	ETHostCollisionEffect:      "ET_HOST_COLLISION_EFFECT",
	ETTorpTypeChanged:          "ET_TORP_TYPE_CHANGED",
	ETTorpTypeChange:           "ET_TORP_TYPE_CHANGE",
}

// Name returns the code's ET_ name, or "" when no source names it.
func (c EventCode) Name() string { return eventCodeNames[c] }

// String returns the ET_ name, or the code in hex (0x00801234) when unknown.
func (c EventCode) String() string {
	if n, ok := eventCodeNames[c]; ok {
		return n
	}
	return hex32(uint32(c))
}

// MarshalJSON is AppendJSON for encoding/json.
func (c EventCode) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// EventClass is the factory id that opens a serialized TGEvent and selects
// the class whose fields follow the common 16-byte header.
type EventClass uint32

// The event classes the sources describe, with what each adds after the
// header (class, code, source, destination).
const (
	EventClassBase             EventClass = 0x00000002 // TGEvent: nothing
	EventClassSubsystem        EventClass = 0x00000101 // TGSubsystemEvent: nothing
	EventClassSubsystemControl EventClass = 0x00000104 // one byte (SubsystemStatus 0x0A)
	EventClassChar             EventClass = 0x00000105 // TGCharEvent: one byte
	EventClassObjPtr           EventClass = 0x0000010C // TGObjPtrEvent: a third object id
	EventClassDeletePlayer     EventClass = 0x00000866 // one byte (DeletePlayerUI 0x17)
	EventClassCollision        EventClass = 0x00008124 // contact points and force (0x15)
	EventClassStartFiring      EventClass = 0x00008128 // eight bytes no source decodes (0x07)
	EventClassObjectExploding  EventClass = 0x00008129 // killer id and explosion lifetime
	EventClassStartWarp        EventClass = 0x0000812A // set name, destination, speed (0x10)
)

var eventClassNames = map[EventClass]string{
	EventClassBase:             "TGEvent",
	EventClassSubsystem:        "TGSubsystemEvent",
	EventClassSubsystemControl: "SubsystemControlEvent",
	EventClassChar:             "TGCharEvent",
	EventClassObjPtr:           "TGObjPtrEvent",
	EventClassDeletePlayer:     "DeletePlayerEvent",
	EventClassCollision:        "CollisionEvent",
	EventClassStartFiring:      "StartFiringEvent",
	EventClassObjectExploding:  "ObjectExplodingEvent",
	EventClassStartWarp:        "StartWarpEvent",
}

// Name returns the class name, or "" for a class no source describes.
func (c EventClass) Name() string { return eventClassNames[c] }

// Known reports whether the class's payload layout is known. (A switch, not
// the name map: the decoder asks for every event message.)
func (c EventClass) Known() bool {
	switch c {
	case EventClassBase, EventClassSubsystem, EventClassSubsystemControl, EventClassChar,
		EventClassObjPtr, EventClassDeletePlayer, EventClassCollision, EventClassStartFiring,
		EventClassObjectExploding, EventClassStartWarp:
		return true
	}
	return false
}

// String returns the class name, or the id in hex when unknown.
func (c EventClass) String() string {
	if n, ok := eventClassNames[c]; ok {
		return n
	}
	return "class(" + hex32(uint32(c)) + ")"
}

// MarshalJSON is AppendJSON for encoding/json.
func (c EventClass) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// hex32 formats v as 0x%08X without fmt's allocation-heavy path.
func hex32(v uint32) string {
	const digits = "0123456789ABCDEF"
	b := [10]byte{'0', 'x'}
	for i := 9; i >= 2; i-- {
		b[i] = digits[v&0xF]
		v >>= 4
	}
	return string(b[:])
}

// AppendJSON appends {"code":"0x008000D7","name":"ET_START_FIRING"}; the
// name is left out for codes no source names.
func (c EventCode) AppendJSON(b []byte) []byte {
	return appendIDName(b, `{"code":"`, uint32(c), c.Name())
}

// AppendJSON appends {"id":"0x00000101","name":"TGSubsystemEvent"}; the
// name is left out for classes no source describes.
func (c EventClass) AppendJSON(b []byte) []byte {
	return appendIDName(b, `{"id":"`, uint32(c), c.Name())
}

// EventCodeNames returns the names of the event codes the sources name,
// and EventClassNames those of the event classes: for generated dissectors
// (bcwire wireshark).
func EventCodeNames() map[EventCode]string {
	out := make(map[EventCode]string, len(eventCodeNames))
	for k, v := range eventCodeNames {
		out[k] = v
	}
	return out
}

// EventClassNames: see EventCodeNames.
func EventClassNames() map[EventClass]string {
	out := make(map[EventClass]string, len(eventClassNames))
	for k, v := range eventClassNames {
		out[k] = v
	}
	return out
}
