package template

import (
	"archive/zip"
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/web"
)

// Container is the blob container template packages live in.
const Container = "templates"

// Bounds of Loader's cache: packages and bytes of their files.
const (
	cacheEntries = 64
	cacheBytes   = 256 << 20
)

// Blobs is what Loader reads through; *blobstore.Store has it.
type Blobs interface {
	// ReadAll reads a whole blob of at most limit bytes. Errors: KindNotFound, KindTooLarge.
	ReadAll(ctx context.Context, container, name string, limit int64) ([]byte, map[string]string, error)
	// ETag is a blob's current ETag (one metadata request). Errors: KindNotFound.
	ETag(ctx context.Context, container, name string) (string, error)
	// ETags maps each blob name under prefix to its ETag (one listing).
	ETags(ctx context.Context, container, prefix string) (map[string]string, error)
}

// Loader reads template packages from the templates container and keeps the most recently used
// ones (at most 64, and 256 MiB of files), keyed by path and checked by ETag. Safe for
// concurrent use; the zero value with Blobs set is ready.
type Loader struct {
	Blobs Blobs

	mu    sync.Mutex
	lru   list.List                // of *cached, most recent first
	index map[string]*list.Element // by Package.Path
	bytes int
}

type cached struct {
	pkg  *Package
	size int
}

// Load reads the package at templatePath, named by the request field field: a ".zip" blob or a
// blob folder ("templates/offer/" or "templates/offer") in the templates container. A package
// whose blobs have the ETags it was last read at is not read or parsed again: one metadata
// request (a zip's properties; a folder's listing) answers. Errors: 400 invalid_blob_path (not
// in templates), 400 template_not_found, 400 template_invalid (naming the file, line and key at
// fault); the store's.
func (l *Loader) Load(ctx context.Context, field, templatePath string) (*Package, error) {
	folder := strings.HasSuffix(templatePath, "/")
	p, err := blobpath.ParseIn(field, strings.TrimSuffix(templatePath, "/"), Container)
	if err != nil {
		return nil, err
	}
	notFound := apperr.Invalid(CodeNotFound, apperr.Field(field, "no template package at this path"))
	bad := func(format string, args ...any) error {
		return apperr.Invalid(CodeInvalid, apperr.Field(field, fmt.Sprintf(format, args...)))
	}
	read := func(name string, limit int64, what string) ([]byte, error) {
		b, _, err := l.Blobs.ReadAll(ctx, p.Container, name, limit)
		switch apperr.KindOf(err) {
		case apperr.KindNotFound:
			return nil, notFound
		case apperr.KindTooLarge:
			return nil, bad("%s is larger than %d KiB", what, limit>>10)
		}
		return b, err
	}
	if !folder && strings.HasSuffix(strings.ToLower(p.Name), ".zip") {
		key := p.String()
		etag, err := l.Blobs.ETag(ctx, p.Container, p.Name)
		if apperr.KindOf(err) == apperr.KindNotFound {
			return nil, notFound
		}
		if err != nil {
			return nil, err
		}
		if pkg := l.get(key, etag); pkg != nil {
			return pkg, nil
		}
		raw, err := read(p.Name, MaxZipBytes, "the package")
		if err != nil {
			return nil, err
		}
		files, err := unzip(raw, bad)
		if err != nil {
			return nil, err
		}
		return l.parse(field, key, etag, files)
	}
	dir := strings.TrimSuffix(p.Name, "/") + "/"
	key := p.Container + "/" + dir
	etags, err := l.Blobs.ETags(ctx, p.Container, dir)
	if apperr.KindOf(err) == apperr.KindNotFound {
		return nil, notFound
	}
	if err != nil {
		return nil, err
	}
	if etags[dir+FileYAML] == "" && etags[dir+FilePDF] == "" {
		return nil, notFound
	}
	var tag []string
	for _, f := range []string{FileYAML, FilePDF, FileSchema} {
		if e, ok := etags[dir+f]; ok {
			tag = append(tag, f+"="+e)
		}
	}
	etag := strings.Join(tag, ";")
	if pkg := l.get(key, etag); pkg != nil {
		return pkg, nil
	}
	files := map[string][]byte{}
	limits := map[string]int64{FileYAML: MaxYAMLBytes, FilePDF: MaxPDFBytes, FileSchema: MaxSchemaBytes}
	for _, f := range []string{FileYAML, FilePDF, FileSchema} {
		if _, ok := etags[dir+f]; !ok {
			continue
		}
		b, err := read(dir+f, limits[f], f)
		if err != nil {
			return nil, err
		}
		files[f] = b
	}
	// A blob replaced between the listing and the reads is cached under the older ETag: the
	// next Load sees a newer ETag and reads it again, so a stale package is never kept.
	return l.parse(field, key, etag, files)
}

func (l *Loader) parse(field, key, etag string, files map[string][]byte) (*Package, error) {
	pkg, err := Parse(field, files)
	if err != nil {
		return nil, err
	}
	pkg.Path, pkg.ETag = key, etag
	size := len(pkg.PDF) + len(pkg.Schema) + len(files[FileYAML])
	l.put(&cached{pkg: pkg, size: size})
	return pkg, nil
}

func (l *Loader) get(key, etag string) *Package {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.index[key]
	if !ok {
		return nil
	}
	c := e.Value.(*cached)
	if c.pkg.ETag != etag {
		l.remove(e)
		return nil
	}
	l.lru.MoveToFront(e)
	return c.pkg
}

func (l *Loader) put(c *cached) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.index == nil {
		l.index = map[string]*list.Element{}
	}
	if e, ok := l.index[c.pkg.Path]; ok {
		l.remove(e)
	}
	if c.size > cacheBytes {
		return
	}
	l.index[c.pkg.Path] = l.lru.PushFront(c)
	l.bytes += c.size
	for l.lru.Len() > cacheEntries || l.bytes > cacheBytes {
		l.remove(l.lru.Back())
	}
}

func (l *Loader) remove(e *list.Element) {
	c := l.lru.Remove(e).(*cached)
	delete(l.index, c.pkg.Path)
	l.bytes -= c.size
}

// cachedPaths lists the cached packages' paths, most recent first (for tests).
func (l *Loader) cachedPaths() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for e := l.lru.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*cached).pkg.Path)
	}
	return out
}

// unzip finds the package's files in a ZIP: at its root, or else inside one top folder. Every
// entry read is checked against its limit by its declared size and by what it really holds.
func unzip(raw []byte, bad func(string, ...any) error) (map[string][]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, bad("the package is not a ZIP file")
	}
	limits := map[string]int64{FileYAML: MaxYAMLBytes, FilePDF: MaxPDFBytes, FileSchema: MaxSchemaBytes}
	byDir := map[string]map[string]*zip.File{}
	for _, f := range zr.File {
		name := strings.TrimPrefix(f.Name, "./")
		dir, base := path.Split(name)
		if _, ok := limits[base]; !ok || strings.Count(dir, "/") > 1 || strings.Contains(name, `\`) || strings.HasPrefix(name, "/") || strings.Contains(dir, "..") {
			continue
		}
		if byDir[dir] == nil {
			byDir[dir] = map[string]*zip.File{}
		}
		if byDir[dir][base] != nil {
			return nil, bad("the package holds %s twice", name)
		}
		byDir[dir][base] = f
	}
	entries, ok := byDir[""]
	if !ok {
		var dirs []string
		for d, files := range byDir {
			if files[FileYAML] != nil || files[FilePDF] != nil {
				dirs = append(dirs, d)
			}
		}
		if len(dirs) > 1 {
			return nil, bad("the package holds more than one folder with a %s", FileYAML)
		}
		if len(dirs) == 1 {
			entries = byDir[dirs[0]]
		}
	}
	files := map[string][]byte{}
	for base, f := range entries {
		limit := limits[base]
		if f.UncompressedSize64 > uint64(limit) {
			return nil, bad("%s is larger than %d KiB", base, limit>>10)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, bad("%s cannot be read from the package", base)
		}
		b, err := readEntry(rc, f, limit)
		rc.Close()
		switch {
		case int64(len(b)) > limit:
			return nil, bad("%s is larger than %d KiB", base, limit>>10)
		case err != nil:
			return nil, bad("%s cannot be read from the package (%s)", base, err)
		}
		files[base] = b
	}
	return files, nil
}

// readEntry reads at most limit+1 bytes of f into one buffer sized up front by what f can
// hold: its declared size (archive/zip refuses to read past it), and no more than its stored
// bytes, or deflate's largest ratio (1032:1) of them. io.ReadAll's doubling
// allocated about 2.5 times the limit for an entry declared at it (found by FuzzUnzip's budget:
// 165 MB for a 96 KiB ZIP).
func readEntry(rc io.Reader, f *zip.File, limit int64) ([]byte, error) {
	size := min(f.UncompressedSize64, uint64(limit))
	switch f.Method {
	case zip.Store:
		size = min(size, f.CompressedSize64)
	case zip.Deflate:
		size = min(size, 1032*f.CompressedSize64+64)
	}
	return web.ReadAll(io.LimitReader(rc, limit+1), int64(size))
}

// SharedFolder is the operator's read-only folder of packages every tenant may use
// (templates/shared/...).
const SharedFolder = "shared"

// Confine checks that the request field's path (a package, or a schema) lies in the caller's
// own folder, templates/<tenant>/, or in the operator's templates/shared/ (DESIGN 14), before
// anything is read: another tenant's path is refused whether or not it exists, so the answer
// reveals nothing. Paths stored on accepted objects are read as stored; only request input is
// confined. Errors: 400 invalid_blob_path naming field.
func Confine(field, templatePath, tenant string) error {
	p, err := blobpath.ParseIn(field, strings.TrimSuffix(templatePath, "/"), Container)
	if err != nil {
		return err
	}
	if tenant != "" && tenant != SharedFolder && strings.HasPrefix(p.Name, tenant+"/") ||
		strings.HasPrefix(p.Name, SharedFolder+"/") {
		return nil
	}
	return apperr.Invalid(blobpath.CodeInvalidBlobPath,
		apperr.Field(field, "a template must be under "+Container+"/<your tenant id>/ or "+Container+"/"+SharedFolder+"/"))
}
