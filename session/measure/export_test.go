package measure

import (
	"github.com/bcwire/bcwire/dissect/flow"
)

// ReferenceBuilder is the reference Builder (reference_test.go), for the
// external tests.
type ReferenceBuilder struct{ b *refBuilder }

func NewReferenceBuilder() *ReferenceBuilder     { return &ReferenceBuilder{newRefBuilder()} }
func (r *ReferenceBuilder) Add(rec *flow.Record) { r.b.Add(rec) }
func (r *ReferenceBuilder) Finish() *Measures    { return r.b.Finish() }
