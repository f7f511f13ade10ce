package evidence

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"time"
)

// Genesis is the prev of the first line.
const Genesis = "0000000000000000000000000000000000000000000000000000000000000000"

// TimeFormat is RFC 3339 with exactly nine fraction digits, UTC.
const TimeFormat = "2006-01-02T15:04:05.000000000Z"

// MaxLineBytes bounds one line.
const MaxLineBytes = 1 << 20

// Event is one line of the bundle.
type Event struct {
	Seq  int64
	Kind string
	At   time.Time
	Data any // generic JSON (see Canonical); an object
	Prev string
	Hash string
}

var kindPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// hashOf computes the hash of e (without its Hash).
func hashOf(e Event) (string, error) {
	var buf bytes.Buffer
	obj := map[string]any{
		"seq": json.Number(strconv.FormatInt(e.Seq, 10)), "kind": e.Kind,
		"at": e.At.UTC().Format(TimeFormat), "data": e.Data, "prev": e.Prev,
	}
	if err := Canonical(&buf, obj); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// Marshal returns the line of e (without newline): members in the order seq, kind, at, data,
// prev, hash, each value in canonical form.
func (e Event) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"seq":`)
	buf.WriteString(strconv.FormatInt(e.Seq, 10))
	buf.WriteString(`,"kind":`)
	if err := canonicalString(&buf, e.Kind); err != nil {
		return nil, err
	}
	buf.WriteString(`,"at":"` + e.At.UTC().Format(TimeFormat) + `","data":`)
	if err := Canonical(&buf, e.Data); err != nil {
		return nil, err
	}
	buf.WriteString(`,"prev":"` + e.Prev + `","hash":"` + e.Hash + `"}`)
	return buf.Bytes(), nil
}

// ParseLine parses one line and checks that it is exactly what Marshal writes and that its
// hash is right. It does not check the chain (see Verify).
func ParseLine(line []byte) (Event, error) {
	var raw struct {
		Seq  json.Number     `json:"seq"`
		Kind string          `json:"kind"`
		At   string          `json:"at"`
		Data json.RawMessage `json:"data"`
		Prev string          `json:"prev"`
		Hash string          `json:"hash"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Event{}, fmt.Errorf("not a bundle line: %v", err)
	}
	seq, err := strconv.ParseInt(string(raw.Seq), 10, 64)
	if err != nil || seq < 1 {
		return Event{}, errors.New("seq must be a positive integer")
	}
	if !kindPattern.MatchString(raw.Kind) {
		return Event{}, errors.New("kind must be a dotted lower-case name")
	}
	at, err := time.Parse(TimeFormat, raw.At)
	if err != nil {
		return Event{}, errors.New("at must be RFC 3339 UTC with nine fraction digits")
	}
	if !isHex64(raw.Prev) || !isHex64(raw.Hash) {
		return Event{}, errors.New("prev and hash must be 64 lower-case hex digits")
	}
	data, err := decodeStrict(raw.Data)
	if err != nil {
		return Event{}, fmt.Errorf("data: %v", err)
	}
	if _, ok := data.(map[string]any); !ok {
		return Event{}, errors.New("data must be an object")
	}
	e := Event{Seq: seq, Kind: raw.Kind, At: at, Data: data, Prev: raw.Prev, Hash: raw.Hash}
	again, err := e.Marshal()
	if err != nil {
		return Event{}, err
	}
	if !bytes.Equal(again, line) {
		return Event{}, errors.New("line is not in canonical form")
	}
	want, err := hashOf(e)
	if err != nil {
		return Event{}, err
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(raw.Hash)) != 1 {
		return Event{}, errors.New("hash does not match the line")
	}
	return e, nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// LineError reports the first bad line (1-based).
type LineError struct {
	Line   int
	Reason string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("evidence bundle line %d: %s", e.Line, e.Reason)
}

// Verify reads a bundle and checks every line and the chain (seq 1, 2, ...; prev = previous
// hash, Genesis first). It returns the head hash and the number of lines, or a *LineError
// naming the first bad line, or the reader's error.
func Verify(r io.Reader) (head string, lines int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), MaxLineBytes)
	head = Genesis
	for sc.Scan() {
		lines++
		e, err := ParseLine(sc.Bytes())
		if err != nil {
			return "", lines, &LineError{Line: lines, Reason: err.Error()}
		}
		if e.Seq != int64(lines) {
			return "", lines, &LineError{Line: lines, Reason: fmt.Sprintf("seq is %d, want %d (a line is missing or out of order)", e.Seq, lines)}
		}
		if e.Prev != head {
			return "", lines, &LineError{Line: lines, Reason: "prev does not match the previous line's hash"}
		}
		head = e.Hash
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return "", lines + 1, &LineError{Line: lines + 1, Reason: "line too long"}
		}
		return "", lines, err
	}
	return head, lines, nil
}
