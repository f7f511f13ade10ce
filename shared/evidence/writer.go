package evidence

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Writer appends events to a bundle, one line each, streaming.
type Writer struct {
	w    io.Writer
	seq  int64
	head string
}

// NewWriter starts a new bundle on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, head: Genesis} }

// ResumeWriter continues a bundle whose last line had seq lastSeq and hash head (as returned
// by Verify). Errors: a malformed head.
func ResumeWriter(w io.Writer, lastSeq int64, head string) (*Writer, error) {
	if !isHex64(head) || lastSeq < 0 {
		return nil, errors.New("evidence: bad resume point")
	}
	return &Writer{w: w, seq: lastSeq, head: head}, nil
}

// Append writes one event and returns it with its hash. data must marshal to a JSON object.
// Errors: a bad kind or data, or the underlying writer's error.
func (w *Writer) Append(kind string, at time.Time, data any) (Event, error) {
	if !kindPattern.MatchString(kind) {
		return Event{}, fmt.Errorf("evidence: kind %q is not a dotted lower-case name", kind)
	}
	if data == nil {
		data = map[string]any{}
	}
	norm, err := normalise(data)
	if err != nil {
		return Event{}, err
	}
	if _, ok := norm.(map[string]any); !ok {
		return Event{}, errors.New("evidence: data must be a JSON object")
	}
	e := Event{Seq: w.seq + 1, Kind: kind, At: at.UTC(), Data: norm, Prev: w.head}
	if e.Hash, err = hashOf(e); err != nil {
		return Event{}, err
	}
	line, err := e.Marshal()
	if err != nil {
		return Event{}, err
	}
	if _, err := w.w.Write(append(line, '\n')); err != nil {
		return Event{}, err
	}
	w.seq, w.head = e.Seq, e.Hash
	return e, nil
}

// Head returns the hash of the last line written (Genesis before the first).
func (w *Writer) Head() string { return w.head }
