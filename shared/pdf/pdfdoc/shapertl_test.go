package pdfdoc

import "testing"

func TestShapeRTL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"hebrew reversed", "שלום", "םולש"},
		{"final full stop on the left", "אב.", ".בא"},
		{"latin run kept, placed from the right", "אב abc ג", "ג abc בא"},
		{"digits and their separators kept", "א 2024-06-11T09:33 ב", "ב 2024-06-11T09:33 א"},
		{"brackets around latin mirrored outside it", "אב (ar)", "(ar) בא"},
		{"arabic joined", "لا.", ".\uFEFB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ShapeRTL(tc.in); got != tc.want {
				t.Fatalf("ShapeRTL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
