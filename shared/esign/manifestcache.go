package esign

import "sync"

// manifestCacheSize is how many PDFs' own field manifests a Creator remembers.
const manifestCacheSize = 256

// manifestCache remembers the esign. fields of PDFs by their SHA-256: the fields are a function
// of the bytes, so a PDF sent for signature again (one contract to many signers, a retry) is not
// parsed again. Lookups return copies; the zero value is ready to use.
type manifestCache struct {
	mu    sync.Mutex
	byKey map[string][]ManifestField
	order []string // oldest first
}

func (c *manifestCache) get(hash string) ([]ManifestField, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.byKey[hash]
	return append([]ManifestField(nil), m...), ok
}

func (c *manifestCache) put(hash string, m []ManifestField) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[string][]ManifestField{}
	}
	if _, ok := c.byKey[hash]; ok {
		return
	}
	if len(c.order) == manifestCacheSize {
		delete(c.byKey, c.order[0])
		c.order = c.order[1:]
	}
	c.byKey[hash] = append([]ManifestField(nil), m...)
	c.order = append(c.order, hash)
}
