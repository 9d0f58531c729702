// Package slacktest gives tests the Slack export fixture of package
// slack (importer/slack/testdata/export, written from Slack's documented
// export format) as a zip.
package slacktest

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the fixture's folder.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "export")
}

// Zip returns the fixture as a zip, with edit (if not nil) adding
// entries after the fixture's.
func Zip(t testing.TB, edit func(w *zip.Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	root := Dir()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		t.Fatalf("slacktest: %v", err)
	}
	if edit != nil {
		edit(zw)
	}
	if err := zw.Close(); err != nil {
		t.Fatalf("slacktest: %v", err)
	}
	return buf.Bytes()
}
