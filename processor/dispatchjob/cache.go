package dispatchjob

import (
	"context"
	"sync"
	"time"

	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/template"
)

// Record jobs of one batch run by the thousand in one process: what they read of the batch and
// its template is kept for a short while instead of being read from storage by every job.
const (
	// templateFresh is how long a loaded template package is used without asking storage
	// whether it changed: a package replaced or removed during a batch reaches its records
	// within this time.
	templateFresh = 10 * time.Second
	cacheEntries  = 64 // per cache; a full cache starts over
)

// cache keeps the settled part of processing batches (ids, template, settings: fixed at
// intake) and recently loaded template packages. Safe for concurrent use.
type cache struct {
	mu        sync.Mutex
	batches   map[string]dispatch.Batch
	templates map[string]cachedTemplate
}

type cachedTemplate struct {
	pkg *template.Package
	at  time.Time
}

// batch is the processing batch id as cached, or loaded (and cached) through load.
func (c *cache) batch(id string, load func() (*dispatch.Batch, error)) (*dispatch.Batch, error) {
	c.mu.Lock()
	b, ok := c.batches[id]
	c.mu.Unlock()
	if ok {
		return &b, nil
	}
	got, err := load()
	if err != nil || got == nil || got.State != dispatch.StateProcessing {
		return got, err
	}
	c.mu.Lock()
	if c.batches == nil || len(c.batches) >= cacheEntries {
		c.batches = map[string]dispatch.Batch{}
	}
	c.batches[id] = *got
	c.mu.Unlock()
	return got, nil
}

// template is the package at path, loaded through load when the cached one is older than
// templateFresh.
func (c *cache) template(path string, now time.Time, load func() (*template.Package, error)) (*template.Package, error) {
	c.mu.Lock()
	t, ok := c.templates[path]
	c.mu.Unlock()
	if ok && now.Sub(t.at) < templateFresh && now.Sub(t.at) >= 0 {
		return t.pkg, nil
	}
	pkg, err := load()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.templates == nil || len(c.templates) >= cacheEntries {
		c.templates = map[string]cachedTemplate{}
	}
	c.templates[path] = cachedTemplate{pkg: pkg, at: now}
	c.mu.Unlock()
	return pkg, nil
}

// loadTemplate is the batch's template package (cached for templateFresh).
func (j *Job) loadTemplate(ctx context.Context, path string) (*template.Package, error) {
	return j.cache.template(path, time.Now(), func() (*template.Package, error) {
		return j.Templates.Load(ctx, "templatePath", path)
	})
}
