// Package pipeline holds no code: its tests run the stages together, from
// captures written and read (dissect) through sessions (session) to what
// is printed and compared (report, session/diff), with captures made by
// the generator (server/synth). A test inside one stage imports only the
// stages before it (the layer test in cmd/bcwire/internal/root says which);
// a test that needs a later stage, or the server beside the pipeline, lives
// here, above report and server, beside cmd and bench.
package pipeline
