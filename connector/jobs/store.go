// Package jobs is the connector's embedded store (SQLite through the pure-Go modernc.org/sqlite):
// the generation queue of background jobs (one row per record, each with its own max retries,
// marked dead after its last failed attempt), scheduled jobs, the upload log, the retention purge,
// and the completion notice a job owes when it finishes.
//
// A worker claims a row with a lease (state running, lease_until); a worker killed mid-row leaves
// the row running, and once the lease has passed any worker claims it again and does it again.
// The work of a row must therefore be idempotent (the connector's rows render under a
// correlationId of their own, which the service answers a second time with the same document).
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Job states.
const (
	JobScheduled = "scheduled" // waits for RunAt
	JobQueued    = "queued"    // rows to do
	JobCompleted = "completed" // every row done
	JobPartial   = "partial"   // some rows done, some dead
	JobFailed    = "failed"    // every row dead
)

// Row states.
const (
	RowPending = "pending"
	RowRunning = "running"
	RowDone    = "done"
	RowDead    = "dead"
)

// ErrNotFound is the error of a job that does not exist.
var ErrNotFound = errors.New("no such job")

// Store is the SQLite file. Safe for concurrent use, and by several processes (WAL, busy
// time-out).
type Store struct {
	db  *sql.DB
	Now func() time.Time
	// Notify says whether a job finishing in a state owes a completion notice (nil: none does);
	// the notice is owed in the same transaction that finishes the job, so none is lost.
	Notify func(state string) bool
}

const schema = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  profile TEXT NOT NULL,
  template_path TEXT NOT NULL,
  request TEXT NOT NULL,
  state TEXT NOT NULL,
  run_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  finished_at INTEGER,
  notify_state TEXT NOT NULL DEFAULT 'none',
  notify_attempts INTEGER NOT NULL DEFAULT 0,
  notify_error TEXT NOT NULL DEFAULT '',
  notify_next_at INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS queue (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  record TEXT NOT NULL,
  state TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_retries INTEGER NOT NULL,
  next_at INTEGER NOT NULL,
  lease_until INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  result TEXT NOT NULL DEFAULT '',
  updated_at INTEGER NOT NULL,
  UNIQUE (job_id, idx)
);
CREATE INDEX IF NOT EXISTS queue_due ON queue (state, next_at);
CREATE TABLE IF NOT EXISTS uploads (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  file TEXT NOT NULL,
  pdf_blob_path TEXT NOT NULL,
  pdf_hash TEXT NOT NULL,
  size INTEGER NOT NULL,
  pages INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  at INTEGER NOT NULL
);
`

// Open opens (and creates) the store at path. The store holds records (names, e-mail
// addresses) and job results, so only its owner may read it: a missing folder is made 0700
// (every level made), a folder that others may write is refused (they could replace the file
// or its side files; an existing folder is never changed, it may be shared, e.g. the current
// one), and the file and its -wal and -shm side files are made 0600, an existing one that is
// looser tightened. Errors: the folder, the file or the schema.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := secureDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	f.Close()
	if err := tighten(path); err != nil {
		return nil, err
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	if err := tighten(path); err != nil { // SQLite made the side files with the file's mode
		db.Close()
		return nil, err
	}
	return &Store{db: db, Now: time.Now}, nil
}

// FileMode and DirMode are the modes of the store's files and of a folder Open makes.
const (
	FileMode os.FileMode = 0o600
	DirMode  os.FileMode = 0o700
)

// secureDir makes dir (0700) when missing, and refuses one that others may write.
func secureDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, DirMode); err != nil {
			return fmt.Errorf("store folder: %w", err)
		}
		return os.Chmod(dir, DirMode) // against a umask that took bits MkdirAll asked for
	}
	if err != nil {
		return fmt.Errorf("store folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("store folder %s is not a folder", dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("store folder %s is writable by others (mode %04o): run `chmod go-w %s`, or put the store in a folder of its own", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// tighten makes the store file and its side files, those that exist, 0600 when looser; a
// symbolic link is refused (it could point anywhere).
func tighten(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store %s: %w", p, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("store %s is not a regular file", p)
		}
		if fi.Mode().Perm()&^FileMode != 0 {
			if err := os.Chmod(p, FileMode); err != nil {
				return fmt.Errorf("store %s: mode %04o, and it could not be made 0600: %w", p, fi.Mode().Perm(), err)
			}
		}
	}
	return nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) now() time.Time { return s.Now().UTC() }

func unix(t time.Time) int64 { return t.UnixMilli() }

func fromUnix(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// Upload is one row of the upload log.
type Upload struct {
	At          time.Time `json:"at"`
	File        string    `json:"file"`
	PDFBlobPath string    `json:"pdfBlobPath"`
	PDFHash     string    `json:"pdfHash"`
	Size        int64     `json:"size"`
	Pages       int       `json:"pages"`
}

// LogUpload adds a row to the upload log (its At is now).
func (s *Store) LogUpload(ctx context.Context, u Upload) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO uploads (at, file, pdf_blob_path, pdf_hash, size, pages) VALUES (?, ?, ?, ?, ?, ?)`,
		unix(s.now()), u.File, u.PDFBlobPath, u.PDFHash, u.Size, u.Pages)
	return err
}

// Uploads lists the upload log, oldest first.
func (s *Store) Uploads(ctx context.Context) ([]Upload, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT at, file, pdf_blob_path, pdf_hash, size, pages FROM uploads ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Upload
	for rows.Next() {
		var u Upload
		var at int64
		if err := rows.Scan(&at, &u.File, &u.PDFBlobPath, &u.PDFHash, &u.Size, &u.Pages); err != nil {
			return nil, err
		}
		u.At = fromUnix(at)
		out = append(out, u)
	}
	return out, rows.Err()
}

// Purged counts what Purge removed.
type Purged struct {
	Jobs    int64 `json:"jobs"`
	Rows    int64 `json:"rows"`
	Uploads int64 `json:"uploads"`
}

// Purge removes finished jobs (completed, partial, failed) that finished more than days ago,
// with their queue rows, and upload-log rows older than that. days 0 disables the purge (nothing
// is removed). Jobs still to do are never removed.
func (s *Store) Purge(ctx context.Context, days int) (Purged, error) {
	var p Purged
	if days <= 0 {
		return p, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return p, err
	}
	defer tx.Rollback()
	if p, err = purge(ctx, tx, s.now(), days); err != nil {
		return p, err
	}
	return p, tx.Commit()
}

// PurgeInterval is how often the worker applies the retention purge by itself (PurgeDue).
const PurgeInterval = 24 * time.Hour

// PurgeDue is the worker's automatic purge: Purge(days) when this store's last automatic purge
// is PurgeInterval or more ago (or there was none), recording when in the same transaction, so
// the workers of one store (processes too) purge once per interval between them. ran is false
// when the purge was not due or days is 0 (disabled).
func (s *Store) PurgeDue(ctx context.Context, days int) (p Purged, ran bool, err error) {
	if days <= 0 {
		return p, false, nil
	}
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return p, false, err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO meta (key, at) VALUES ('purged_at', ?)
		ON CONFLICT (key) DO UPDATE SET at = excluded.at WHERE meta.at <= ?`, unix(now), unix(now.Add(-PurgeInterval)))
	if err != nil {
		return p, false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return p, false, nil
	}
	if p, err = purge(ctx, tx, now, days); err != nil {
		return p, false, err
	}
	return p, true, tx.Commit()
}

// purge removes, in tx, what Purge removes at now.
func purge(ctx context.Context, tx *sql.Tx, now time.Time, days int) (Purged, error) {
	var p Purged
	cut := unix(now.Add(-time.Duration(days) * 24 * time.Hour))
	res, err := tx.ExecContext(ctx, `DELETE FROM queue WHERE job_id IN (SELECT id FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ?)`, cut)
	if err != nil {
		return p, err
	}
	p.Rows, _ = res.RowsAffected()
	if res, err = tx.ExecContext(ctx, `DELETE FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ?`, cut); err != nil {
		return p, err
	}
	p.Jobs, _ = res.RowsAffected()
	if res, err = tx.ExecContext(ctx, `DELETE FROM uploads WHERE at < ?`, cut); err != nil {
		return p, err
	}
	p.Uploads, _ = res.RowsAffected()
	return p, nil
}
