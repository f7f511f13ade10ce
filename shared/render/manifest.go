package render

import (
	"strings"
	"sync"

	"github.com/esign-svc/esign/shared/document"
)

// Shared field manifests (Renderer.SharedManifests, issue 26): a batch's records, rendered from
// one template, share one manifest blob in their folder, named by its content.

// manifestBlob is where the manifest of the PDF named pdf goes, its metadata, and the metadata
// key that says an existing blob of that name is this one: beside the PDF as
// <pdf>.manifest.json, the render's (its request hash); with SharedManifests, in the PDF's
// folder named by its content, any document's of that folder (its full hash). A batch record's
// name always ends in .pdf, so it is never a shared manifest's.
func (r *Renderer) manifestBlob(pdf string, d *document.Document, manifest []byte) (name string, meta map[string]string, key string) {
	if r.SharedManifests == nil {
		return pdf + ".manifest.json", map[string]string{metaRequestHash: d.RequestHash}, metaRequestHash
	}
	sum := sha256Hex(manifest)
	return pdf[:strings.LastIndexByte(pdf, '/')+1] + "manifest-" + sum[:32] + ".json",
		map[string]string{metaManifestHash: sum}, metaManifestHash
}

// ManifestNames are the shared manifests a renderer has written or found (SharedManifests), so
// that only the first document of a folder in a process writes its manifest. At most
// maxManifestNames are kept: past it the set starts again (a name forgotten costs one create
// that conflicts). The zero value is ready; safe for concurrent use.
type ManifestNames struct {
	mu    sync.Mutex
	known map[string]struct{}
}

const maxManifestNames = 1024

// has reports whether name was written or found; false on a nil set.
func (m *ManifestNames) has(name string) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.known[name]
	return ok
}

// add remembers name; nothing on a nil set.
func (m *ManifestNames) add(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.known == nil || len(m.known) >= maxManifestNames {
		m.known = make(map[string]struct{})
	}
	m.known[name] = struct{}{}
}
