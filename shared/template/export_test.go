package template

// CachedPaths lists the cached packages' paths, most recent first.
func (l *Loader) CachedPaths() []string { return l.cachedPaths() }
