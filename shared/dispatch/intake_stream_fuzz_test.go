package dispatch

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzEachRecord: the streamed decode takes exactly the dataSource values that decode whole as
// an array (json.Unmarshal into []json.RawMessage, the intake's decode before streaming), with
// the same elements in the same order.
func FuzzEachRecord(f *testing.F) {
	for _, s := range []string{`[]`, `null`, `{}`, `[1, "x", null, [], {}]`, `[1][2]`, `[1,]`, `[,1]`, ` [ {"a":1} ] `,
		`[{"a":1}] x`, `[{"a":"\u2028"}]`, "", `"x"`, `[{"a":[1,{"b":2}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, ds []byte) {
		var whole []json.RawMessage
		wantErr := json.Unmarshal(ds, &whole) != nil
		var got []json.RawMessage
		err := eachRecord(ds, func(_ int, raw json.RawMessage) error {
			got = append(got, raw)
			return nil
		})
		if (err != nil) != wantErr {
			t.Fatalf("%q: streamed err = %v, whole err = %v", ds, err, wantErr)
		}
		if err != nil {
			return
		}
		if len(got) != len(whole) {
			t.Fatalf("%q: %d elements streamed, %d whole", ds, len(got), len(whole))
		}
		for i := range got {
			if !bytes.Equal(got[i], whole[i]) {
				t.Fatalf("%q: element %d streamed %q, whole %q", ds, i, got[i], whole[i])
			}
		}
	})
}
