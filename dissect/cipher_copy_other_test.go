//go:build !amd64 || purego

package dissect

// copyEachForms lists the forms of copyEach this machine can run.
func copyEachForms() []copyForm {
	return []copyForm{{"go", copyEach}}
}
