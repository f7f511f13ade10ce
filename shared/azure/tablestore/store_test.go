package tablestore

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/azure/azuritetest"
	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := New(azuritetest.Account(t), strings.ReplaceAll(azuritetest.Name("t"), "-", ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureTable(context.Background()); err != nil {
		t.Fatalf("second EnsureTable: %v", err)
	}
	return s
}

func wantErr(t *testing.T, err error, kind apperr.Kind, code string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("err = %v, want kind %d code %s", err, kind, code)
	}
}

func TestRoundTripTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	when := time.Date(2031, 7, 4, 12, 30, 45, 123456789, time.FixedZone("x", 3600))
	in := Entity{PartitionKey: "g1", RowKey: "session", Props: map[string]any{
		"s": "héllo 'quoted'", "b": true, "i32": int32(-7), "i": 42, "big": int64(math.MaxInt64),
		"neg": int64(-1 << 40), "f": 2.5, "whole": 3.0, "t": when, "bin": []byte{0, 1, 2, 255},
		"nothing": nil, "zero": time.Time{},
	}}
	etag, err := s.Insert(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "g1", "session")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"s": "héllo 'quoted'", "b": true, "i32": int32(-7), "i": int64(42), "big": int64(math.MaxInt64),
		"neg": int64(-1 << 40), "f": 2.5, "t": when.UTC().Truncate(100 * time.Nanosecond),
		"bin": []byte{0, 1, 2, 255},
	}
	if got.Float64("whole") != 3.0 {
		t.Errorf("whole double = %v", got.Props["whole"])
	}
	delete(got.Props, "whole") // its Go type differs between Azure and Azurite: see Entity
	if d := cmp.Diff(want, got.Props); d != "" {
		t.Errorf("props round trip (-want +got):\n%s", d)
	}
	if got.ETag != etag || got.PartitionKey != "g1" || got.RowKey != "session" || got.Timestamp.IsZero() {
		t.Errorf("entity = %+v, insert etag %s", got, etag)
	}
	if got.Int64("i") != 42 || got.Int64("i32") != -7 || got.String("s") == "" || !got.Bool("b") ||
		!got.Time("t").Equal(when.Truncate(100*time.Nanosecond)) || got.Float64("f") != 2.5 || !bytes.Equal(got.Bytes("bin"), []byte{0, 1, 2, 255}) {
		t.Error("typed getters disagree with the props")
	}
}

func TestRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	big := strings.Repeat("x", 32*1024+1)       // 64 KiB + 2 bytes as UTF-16
	fits := strings.Repeat("x", 32*1024)        // exactly 64 KiB
	wide := strings.Repeat("\U0001F600", 16385) // surrogate pairs: 4 bytes each in UTF-16
	tests := []struct {
		name string
		e    Entity
		kind apperr.Kind
		code string
	}{
		{"string over 64 KiB", Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"v": big}}, apperr.KindTooLarge, CodePropertyTooLarge},
		{"non-BMP over 64 KiB", Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"v": wide}}, apperr.KindTooLarge, CodePropertyTooLarge},
		{"binary over 64 KiB", Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"v": make([]byte, 64<<10+1)}}, apperr.KindTooLarge, CodePropertyTooLarge},
		{"entity over 1 MiB", Entity{PartitionKey: "p", RowKey: "r", Props: manyProps(17, fits)}, apperr.KindTooLarge, CodeEntityTooLarge},
		{"too many properties", Entity{PartitionKey: "p", RowKey: "r", Props: manyProps(253, "x")}, apperr.KindTooLarge, CodeEntityTooLarge},
		{"slash in key", Entity{PartitionKey: "a/b", RowKey: "r"}, apperr.KindInvalid, CodeInvalidKey},
		{"hash in row key", Entity{PartitionKey: "p", RowKey: "a#b"}, apperr.KindInvalid, CodeInvalidKey},
		{"control char in key", Entity{PartitionKey: "p\n", RowKey: "r"}, apperr.KindInvalid, CodeInvalidKey},
		{"key over 1 KiB", Entity{PartitionKey: strings.Repeat("k", 513), RowKey: "r"}, apperr.KindInvalid, CodeInvalidKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := s.Insert(ctx, tc.e)
			wantErr(t, err, tc.kind, tc.code)
		})
	}
	// The largest allowed string is stored.
	if _, err := s.Insert(ctx, Entity{PartitionKey: "p", RowKey: "fits", Props: map[string]any{"v": fits}}); err != nil {
		t.Errorf("a 64 KiB string was refused: %v", err)
	}
	for _, props := range []map[string]any{{"v": uint(1)}, {"v": math.NaN()}, {"Timestamp": "x"}, {"bad-name": 1}, {"v": time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}} {
		if _, err := s.Insert(ctx, Entity{PartitionKey: "p", RowKey: "bad", Props: props}); err == nil || apperr.KindOf(err) != apperr.KindInternal {
			t.Errorf("props %v: err %v, want an internal (programming) error", props, err)
		}
	}
	if _, err := s.Get(ctx, "p", "bad"); apperr.KindOf(err) != apperr.KindNotFound {
		t.Errorf("a refused entity was written: %v", err)
	}
}

func manyProps(n int, v string) map[string]any {
	m := map[string]any{}
	for i := 0; i < n; i++ {
		m["p"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))] = v
	}
	return m
}

func TestSingleEntityErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	e1, err := s.Insert(ctx, Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"n": 1, "keep": "k"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, "p", "missing")
	wantErr(t, err, apperr.KindNotFound, CodeEntityNotFound)

	_, err = s.Insert(ctx, Entity{PartitionKey: "p", RowKey: "r"})
	wantErr(t, err, apperr.KindConflict, CodeEntityExists)

	e2, err := s.Merge(ctx, Entity{PartitionKey: "p", RowKey: "r", ETag: e1, Props: map[string]any{"n": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "p", "r"); got.Int64("n") != 2 || got.String("keep") != "k" {
		t.Errorf("after merge: %+v", got.Props)
	}
	_, err = s.Replace(ctx, Entity{PartitionKey: "p", RowKey: "r", ETag: e1, Props: map[string]any{"n": 3}})
	wantErr(t, err, apperr.KindPrecondition, CodePrecondition)
	if !errors.Is(err, apperr.ErrPrecondition) {
		t.Error("errors.Is(err, apperr.ErrPrecondition) = false")
	}
	e3, err := s.Replace(ctx, Entity{PartitionKey: "p", RowKey: "r", ETag: e2, Props: map[string]any{"n": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "p", "r"); got.Int64("n") != 3 || got.Props["keep"] != nil {
		t.Errorf("after replace: %+v", got.Props)
	}
	if _, err := s.Replace(ctx, Entity{PartitionKey: "p", RowKey: "r", Props: map[string]any{"n": 4}}); err == nil {
		t.Error("Replace without an ETag succeeded")
	}
	_, err = s.Replace(ctx, Entity{PartitionKey: "p", RowKey: "missing", ETag: "*"})
	wantErr(t, err, apperr.KindNotFound, CodeEntityNotFound)

	wantErr(t, s.Delete(ctx, "p", "r", e2), apperr.KindPrecondition, CodePrecondition)
	if err := s.Delete(ctx, "p", "r", e3); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Delete(ctx, "p", "r", ""), apperr.KindNotFound, CodeEntityNotFound)

	if _, err := s.Upsert(ctx, Entity{PartitionKey: "p", RowKey: "u", Props: map[string]any{"v": "1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upsert(ctx, Entity{PartitionKey: "p", RowKey: "u", Props: map[string]any{"v": "2"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "p", "u"); got.String("v") != "2" {
		t.Errorf("after upserts: %+v", got.Props)
	}
	if err := s.Delete(ctx, "p", "u", ""); err != nil {
		t.Errorf("unconditional delete: %v", err)
	}

	missing, err := New(azuritetest.Account(t), strings.ReplaceAll(azuritetest.Name("nope"), "-", ""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = missing.Get(ctx, "p", "r")
	if apperr.KindOf(err) != apperr.KindNotFound {
		t.Errorf("Get on a missing table: %v, want not found", err)
	}
	_, err = missing.Insert(ctx, Entity{PartitionKey: "p", RowKey: "r"})
	wantErr(t, err, apperr.KindNotFound, CodeTableNotFound)
}

func TestNewRefusesBadTableName(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"", "ab", "1abc", "has-hyphen", strings.Repeat("a", 64)} {
		if _, err := New(azuritetest.Account(t), n); err == nil {
			t.Errorf("New(%q) accepted", n)
		}
	}
}

func TestQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	// More than one page (the service pages at 1000 entities).
	ops := make([]Op, 0, MaxBatchOps)
	for b := 0; b < 11; b++ {
		ops = ops[:0]
		for i := 0; i < 100; i++ {
			n := b*100 + i
			state := "open"
			if n%10 == 0 {
				state = "done"
			}
			ops = append(ops, InsertOp(Entity{RowKey: "slot-" + pad(n), Props: map[string]any{"state": state, "n": n}}))
		}
		if err := s.Transact(ctx, "g", ops); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []Entity{
		{PartitionKey: "g", RowKey: "audit-1"}, {PartitionKey: "g", RowKey: "slot"}, {PartitionKey: "g", RowKey: "slou"},
		{PartitionKey: "other", RowKey: "slot-0001", Props: map[string]any{"state": "done"}},
		{PartitionKey: "it's", RowKey: "x"},
	} {
		if _, err := s.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		pk   string
		opts *QueryOptions
		want int
	}{
		{"whole partition", "g", nil, 1103},
		{"row key prefix", "g", &QueryOptions{RowKeyPrefix: "slot-"}, 1100},
		{"prefix and filter", "g", &QueryOptions{RowKeyPrefix: "slot-", Filter: "state eq " + Quote("done")}, 110},
		{"typed filter", "g", &QueryOptions{Filter: "n ge 1050L"}, 50},
		{"limit", "g", &QueryOptions{RowKeyPrefix: "slot-", Limit: 5}, 5},
		{"all partitions", "", &QueryOptions{RowKeyPrefix: "slot-0001"}, 2},
		{"quoted partition", "it's", nil, 1},
		{"empty partition", "none", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.Query(ctx, tc.pk, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Errorf("got %d entities, want %d", len(got), tc.want)
			}
			for _, e := range got {
				if e.ETag == "" || (tc.opts != nil && !strings.HasPrefix(e.RowKey, tc.opts.RowKeyPrefix)) {
					t.Fatalf("entity %+v", e)
				}
			}
		})
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Each(ctx, "g", nil, func(Entity) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("Each with a failing fn: %v after %d", err, n)
	}
}

func pad(n int) string {
	s := "0000" + itoa(n)
	return s[len(s)-4:]
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"slot-": "slot.", "a": "b", "ab\U0010FFFF": "ac"} {
		if got, ok := prefixEnd(in); !ok || got != want {
			t.Errorf("prefixEnd(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := prefixEnd("\U0010FFFF"); ok {
		t.Error("prefixEnd of the largest rune has a bound")
	}
}
