//go:build !purego

package dissect

// copyEachForms lists the forms of copyEach this machine can run.
func copyEachForms() []copyForm {
	forms := []copyForm{{"sse", copyEachSSE}}
	if haveMaskedCopy {
		forms = append(forms, copyForm{"avx512", copyEachAVX512})
	}
	return forms
}
