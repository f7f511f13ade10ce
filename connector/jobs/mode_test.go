package jobs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestFileModes: a new store's folder is 0700 and its file and WAL/SHM side files 0600; an
// existing file or side file that is looser is tightened when the store is opened.
func TestFileModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state", "svcconnect")
	path := filepath.Join(dir, "jobs.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	add(t, st, 2, 3) // a write, so the WAL and its index exist
	if got := mode(t, dir); got != DirMode {
		t.Fatalf("folder mode %04o, want 0700", got)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if got := mode(t, p); got != FileMode {
			t.Fatalf("%s mode %04o, want 0600", filepath.Base(p), got)
		}
	}
	// Looser side files (an older connector's, or someone's chmod) while a store is open:
	// the next process to open the store tightens them.
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	second, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	second.Close()
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if got := mode(t, p); got != FileMode {
			t.Fatalf("%s mode %04o after reopening, want 0600", filepath.Base(p), got)
		}
	}
	st.Close()
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	third, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if got := mode(t, path); got != FileMode {
		t.Fatalf("file mode %04o after reopening, want 0600", got)
	}
}

// TestFolderOthersMayWrite: a folder that others may write is refused with a message that
// names it and the fix, and left as it was; one they may only read is used as is.
func TestFolderOthersMayWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		mode os.FileMode
		ok   bool
	}{{0o777, false}, {0o770, false}, {0o757, false}, {os.ModeSticky | 0o777, false}, {0o755, true}, {0o700, true}} {
		dir := filepath.Join(t.TempDir(), "shared")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, tc.mode); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(dir); fi.Mode()&(os.ModePerm|os.ModeSticky) != tc.mode {
			t.Fatalf("the test could not set %v: %v", tc.mode, fi.Mode())
		}
		st, err := Open(ctx, filepath.Join(dir, "jobs.db"))
		if tc.ok {
			if err != nil {
				t.Fatalf("%v: %v", tc.mode, err)
			}
			st.Close()
			if got := mode(t, filepath.Join(dir, "jobs.db")); got != FileMode {
				t.Fatalf("%v: file mode %04o", tc.mode, got)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "is writable by others") || !strings.Contains(err.Error(), "chmod go-w "+dir) {
			t.Fatalf("%v: error %v", tc.mode, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "jobs.db")); !os.IsNotExist(err) {
			t.Fatalf("%v: the file was made in a refused folder", tc.mode)
		}
		fi, _ := os.Stat(dir)
		if fi.Mode()&(os.ModePerm|os.ModeSticky) != tc.mode {
			t.Fatalf("%v: the folder was changed to %v", tc.mode, fi.Mode())
		}
	}
}

// TestSymlinkRefused: a store file that is a symbolic link is refused.
func TestSymlinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.db")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "jobs.db")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "jobs.db")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("error %v", err)
	}
}
