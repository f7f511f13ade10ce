package esign

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestManifestCacheCopiesAndEvictsOldest(t *testing.T) {
	t.Parallel()
	var c manifestCache
	if _, ok := c.get("h0"); ok {
		t.Fatal("an empty cache knows h0")
	}
	want := []ManifestField{{Name: "esign.buyer.signature", Role: "buyer", Kind: "signature", Page: 1}}
	c.put("h0", want)
	got, ok := c.get("h0")
	if !ok || !cmp.Equal(got, want) {
		t.Fatalf("get h0 = %v %v", got, ok)
	}
	got[0].Role = "changed" // a caller's change does not reach the cache
	if again, _ := c.get("h0"); again[0].Role != "buyer" {
		t.Fatal("the cache handed out its own slice")
	}
	c.put("none", nil) // a PDF without fields is remembered too
	if m, ok := c.get("none"); !ok || len(m) != 0 {
		t.Fatalf("get none = %v %v", m, ok)
	}
	for i := 0; i < manifestCacheSize; i++ {
		c.put(fmt.Sprintf("k%d", i), want)
	}
	if _, ok := c.get("h0"); ok {
		t.Fatal("the oldest entry was not evicted")
	}
	if _, ok := c.get(fmt.Sprintf("k%d", manifestCacheSize-1)); !ok {
		t.Fatal("the newest entry is gone")
	}
}
