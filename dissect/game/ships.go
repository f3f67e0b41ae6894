package game

// ShipSpec describes one stock ship class for decoding: its name and the
// order in which its top-level subsystems are serialized in StateUpdate.
// (Placeholder: the ObjCreate/StateUpdate work fills this in.)
type ShipSpec struct {
	Name string
}
