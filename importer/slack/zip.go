package slack

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Limits on the zip's entries.
const (
	// MaxJSON bounds a JSON file of the export (a day of one channel, the
	// users list): far above any real one.
	MaxJSON = 256 << 20
	// MaxFile bounds an uploaded file in the zip.
	MaxFile = 1 << 30
)

// Error is a refusal of the zip's content, naming the entry.
type Error struct {
	Entry string
	Err   error
}

func (e *Error) Error() string {
	if e.Entry == "" {
		return "slack export: " + e.Err.Error()
	}
	return fmt.Sprintf("slack export: %s: %v", e.Entry, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func refuse(entry, format string, args ...any) error {
	return &Error{Entry: entry, Err: fmt.Errorf(format, args...)}
}

// export is the checked index of a zip.
type export struct {
	files map[string]*zip.File
	dirs  map[string][]string // folder -> its .json day files, sorted
}

func openExport(zr *zip.Reader) (*export, error) {
	ex := &export{files: map[string]*zip.File{}, dirs: map[string][]string{}}
	for _, f := range zr.File {
		name := f.Name
		clean := strings.TrimSuffix(name, "/")
		switch {
		case clean == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`):
			return nil, refuse(name, "not a relative path inside the export")
		case path.Clean(clean) != clean || slices.Contains(strings.Split(clean, "/"), ".."):
			return nil, refuse(name, "the path leaves the export's folder or is not clean")
		case f.Mode()&fs.ModeSymlink != 0:
			return nil, refuse(name, "links are not allowed in an export")
		case f.Mode().IsDir() || strings.HasSuffix(name, "/"):
			continue
		case !f.Mode().IsRegular():
			return nil, refuse(name, "not a regular file")
		}
		limit := uint64(MaxJSON)
		if strings.HasPrefix(name, "__uploads/") {
			limit = MaxFile
		}
		if f.UncompressedSize64 > limit {
			return nil, refuse(name, "%d bytes: larger than any file of an export (%d)", f.UncompressedSize64, limit)
		}
		ex.files[name] = f
		if dir, file, ok := strings.Cut(name, "/"); ok && !strings.Contains(file, "/") && strings.HasSuffix(file, ".json") {
			ex.dirs[dir] = append(ex.dirs[dir], file)
		}
	}
	for _, days := range ex.dirs {
		slices.Sort(days)
	}
	if ex.files["users.json"] == nil || ex.files["channels.json"] == nil {
		return nil, refuse("", "not a Slack export: users.json and channels.json are missing")
	}
	return ex, nil
}

// open reads an entry, never more than it states.
func (ex *export) open(name string) (io.ReadCloser, error) {
	f := ex.files[name]
	if f == nil {
		return nil, fs.ErrNotExist
	}
	rc, err := f.Open()
	if err != nil {
		return nil, refuse(name, "%v", err)
	}
	return &sizedReader{rc: rc, left: int64(f.UncompressedSize64), name: name}, nil
}

// sizedReader fails when an entry holds more bytes than stated.
type sizedReader struct {
	rc   io.ReadCloser
	left int64
	name string
}

func (r *sizedReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	r.left -= int64(n)
	if r.left < 0 {
		return n, refuse(r.name, "holds more bytes than it states")
	}
	if errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrChecksum) {
		err = refuse(r.name, "holds more bytes than it states, or is corrupt (%v)", err)
	} else if err != nil && !errors.Is(err, io.EOF) {
		err = refuse(r.name, "%v", err)
	}
	return n, err
}

func (r *sizedReader) Close() error { return r.rc.Close() }

// readJSON decodes one JSON file; a missing optional file is empty.
func (ex *export) readJSON(name string, optional bool, v any) error {
	rc, err := ex.open(name)
	if errors.Is(err, fs.ErrNotExist) && optional {
		return nil
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return refuse(name, "%s", jsonProblem(data, err))
	}
	return nil
}

// jsonProblem words a decoding error with its line.
func jsonProblem(data []byte, err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	offset := int64(-1)
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	if offset < 0 {
		return "broken JSON: " + err.Error()
	}
	line := 1 + strings.Count(string(data[:min(int(offset), len(data))]), "\n")
	return fmt.Sprintf("line %d: broken JSON: %v", line, err)
}
