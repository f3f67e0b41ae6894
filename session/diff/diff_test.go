package diff

import "testing"

func TestBinomialP(t *testing.T) {
	if p := binomialP(5, 10, 0.5); p < 0.99 {
		t.Errorf("even split: p=%v", p)
	}
	if p := binomialP(0, 10, 0.5); p > 0.002 || p < 0.001 {
		t.Errorf("0 of 10: p=%v, want 2*0.5^10", p)
	}
	if p := binomialP(1000, 10000, 0.5); p > 1e-10 {
		t.Errorf("normal approximation: p=%v", p)
	}
}
