package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

func writeBundle(t testing.TB, n int) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	at := time.Date(2024, 6, 11, 9, 30, 0, 5, time.UTC)
	for i := 0; i < n; i++ {
		if _, err := w.Append("slot.signed", at.Add(time.Duration(i)), map[string]any{
			"slotIndex": i, "z": "last", "a": []any{"ü\n\"x\"", 1.5, true, nil}, "nested": map[string]int{"b": 2, "a": 1},
		}); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes(), w.Head()
}

func TestWriterAndVerify(t *testing.T) {
	t.Parallel()
	data, head := writeBundle(t, 5)
	got, n, err := Verify(bytes.NewReader(data))
	if err != nil || got != head || n != 5 {
		t.Fatalf("Verify = %s %d %v, want %s 5", got, n, err, head)
	}
	first := strings.SplitN(string(data), "\n", 2)[0]
	// the documented line shape and the documented hash definition
	want := `{"seq":1,"kind":"slot.signed","at":"2024-06-11T09:30:00.000000005Z","data":{"a":["ü\n\"x\"",1.5,true,null],"nested":{"a":1,"b":2},"slotIndex":0,"z":"last"},"prev":"` + Genesis + `","hash":"`
	if !strings.HasPrefix(first, want) {
		t.Fatalf("line 1 = %s\nwant prefix %s", first, want)
	}
	canon := `{"at":"2024-06-11T09:30:00.000000005Z","data":{"a":["ü\n\"x\"",1.5,true,null],"nested":{"a":1,"b":2},"slotIndex":0,"z":"last"},"kind":"slot.signed","prev":"` + Genesis + `","seq":1}`
	sum := sha256.Sum256([]byte(canon))
	if !strings.HasSuffix(first, `"hash":"`+hex.EncodeToString(sum[:])+`"}`) {
		t.Fatalf("hash is not SHA-256 of the canonical form %s", canon)
	}
	if h, n, err := Verify(strings.NewReader("")); err != nil || h != Genesis || n != 0 {
		t.Fatalf("empty bundle: %s %d %v", h, n, err)
	}
}

func TestVerifyDetects(t *testing.T) {
	t.Parallel()
	data, _ := writeBundle(t, 5)
	lines := strings.SplitAfter(string(data), "\n")
	for _, tc := range []struct {
		name   string
		bundle string
		line   int
	}{
		{"removed line", lines[0] + lines[1] + lines[3] + lines[4], 3},
		{"removed first line", strings.Join(lines[1:], ""), 1},
		{"swapped lines", lines[0] + lines[2] + lines[1], 2},
		{"changed data", strings.Replace(string(data), `"slotIndex":2`, `"slotIndex":7`, 1), 3},
		{"changed time", strings.Replace(string(data), "09:30:00.000000005Z", "09:30:01.000000005Z", 1), 1},
		{"whitespace", strings.Replace(string(data), `{"seq":2,`, `{"seq":2, `, 1), 2},
		{"extra member", strings.Replace(string(data), `{"seq":4,`, `{"seq":4,"x":1,`, 1), 4},
		{"garbage", lines[0] + "not json\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Verify(strings.NewReader(tc.bundle))
			var le *LineError
			if !errors.As(err, &le) || le.Line != tc.line {
				t.Fatalf("want LineError at line %d, got %v", tc.line, err)
			}
		})
	}
}

func TestResumeWriter(t *testing.T) {
	t.Parallel()
	data, head := writeBundle(t, 2)
	buf := bytes.NewBuffer(bytes.Clone(data))
	w, err := ResumeWriter(buf, 2, head)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append("session.completed", time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if h, n, err := Verify(buf); err != nil || n != 3 || h != w.Head() {
		t.Fatalf("resumed bundle: %s %d %v", h, n, err)
	}
}

func TestAppendRejects(t *testing.T) {
	t.Parallel()
	w := NewWriter(&bytes.Buffer{})
	for _, tc := range []struct {
		kind string
		data any
	}{{"Bad Kind", nil}, {"slot", nil}, {"slot.signed", []int{1}}, {"slot.signed", "x"}} {
		if _, err := w.Append(tc.kind, time.Now(), tc.data); err == nil {
			t.Errorf("Append(%q, %v) accepted", tc.kind, tc.data)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	data, _ := writeBundle(f, 2)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"seq":1}`))
	f.Add([]byte(`{"seq":1,"kind":"a.b","at":"x","data":{},"prev":"","hash":""}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseLine(line)
		if err != nil {
			return
		}
		again, err := e.Marshal()
		if err != nil || !bytes.Equal(again, line) {
			t.Fatalf("accepted line does not round-trip: %q -> %q (%v)", line, again, err)
		}
	})
}
