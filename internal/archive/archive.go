package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/teamchat/chat/storage"
)

// Format is the manifest's format name; Version the newest format
// version this package reads and the one it writes.
const (
	Format  = "teamchat-export"
	Version = 1
)

// Limits of what a reader accepts.
const (
	MaxManifest     = 1 << 20
	MaxRecordsEntry = 64 << 20
	MaxLine         = 8 << 20
	// ChunkSize is the size at which a writer starts a new records
	// entry.
	ChunkSize = 8 << 20
)

// Sections of files.
const (
	Uploads = "uploads"
	Emoji   = "emoji"
)

// Manifest is the archive's first entry.
type Manifest struct {
	Format        string `json:"format"`
	FormatVersion int    `json:"format_version"`
	// Schema is the newest migration of the database the records came
	// from ("0028_notifications"), SchemaVersion its number.
	Schema        string `json:"schema"`
	SchemaVersion int    `json:"schema_version"`
	Created       int64  `json:"created"`
	// Source names what made the archive ("teamchat", "slack").
	Source string    `json:"source"`
	Realm  RealmInfo `json:"realm"`
	// Kinds counts the records of each kind in the archive, with their
	// greatest ID, in the order they come.
	Kinds []KindInfo `json:"kinds"`
	// Files counts the files of each section.
	Files map[string]int64 `json:"files"`
	// NewOrganization: the archive holds no realms record, system groups
	// or role memberships; the import makes them as a new organization
	// gets them (an import from another system).
	NewOrganization bool `json:"new_organization,omitempty"`
}

// RealmInfo is what the manifest says of the organization, for people.
type RealmInfo struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url"`
}

// KindInfo counts one kind's records.
type KindInfo struct {
	Name    string `json:"name"`
	Records int64  `json:"records"`
	MaxID   int64  `json:"max_id"`
}

// Kind returns the manifest's count of the kind (zero when absent).
func (m *Manifest) Kind(name string) KindInfo {
	for _, k := range m.Kinds {
		if k.Name == name {
			return k
		}
	}
	return KindInfo{Name: name}
}

// Error is a refusal of the archive's content, naming where.
type Error struct {
	Entry string
	Line  int
	Err   error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %v", e.Entry, e.Line, e.Err)
	}
	if e.Entry == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s: %v", e.Entry, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func refuse(entry string, line int, format string, args ...any) error {
	return &Error{Entry: entry, Line: line, Err: fmt.Errorf(format, args...)}
}

// Writer writes an archive.
type Writer struct {
	gz      *gzip.Writer
	tw      *tar.Writer
	modTime time.Time
	buf     bytes.Buffer
	kind    string
	chunks  map[string]int
	closed  bool
}

// NewWriter starts an archive on w with its manifest.
func NewWriter(w io.Writer, m Manifest) (*Writer, error) {
	gz, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	aw := &Writer{gz: gz, tw: tar.NewWriter(gz), modTime: time.Unix(m.Created, 0), chunks: map[string]int{}}
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := aw.entry("manifest.json", int64(len(body)+1), bytes.NewReader(append(body, '\n'))); err != nil {
		return nil, err
	}
	return aw, nil
}

func (w *Writer) entry(name string, size int64, r io.Reader) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: w.modTime, Format: tar.FormatPAX}
	if err := w.tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(w.tw, r)
	if err == nil && n != size {
		err = fmt.Errorf("archive: %s: %d bytes, not the %d stated", name, n, size)
	}
	return err
}

// Record appends one record of the kind.
func (w *Writer) Record(k *storage.Kind, rec any) error {
	if w.kind != k.Name || w.buf.Len() >= ChunkSize {
		if err := w.flush(); err != nil {
			return err
		}
		w.kind = k.Name
	}
	line, err := MarshalRecord(rec)
	if err != nil {
		return fmt.Errorf("archive: %s record: %w", k.Name, err)
	}
	w.buf.Write(line)
	w.buf.WriteByte('\n')
	return nil
}

func (w *Writer) flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	w.chunks[w.kind]++
	name := fmt.Sprintf("records/%s/%06d.jsonl", w.kind, w.chunks[w.kind])
	err := w.entry(name, int64(w.buf.Len()), &w.buf)
	w.buf.Reset()
	return err
}

// File writes a file of the section (Uploads or Emoji) of size bytes.
func (w *Writer) File(section, name string, size int64, r io.Reader) error {
	if err := w.flush(); err != nil {
		return err
	}
	if err := checkName(section + "/" + name); err != nil {
		return err
	}
	return w.entry(section+"/"+name, size, r)
}

// Close ends the archive (it does not close the underlying writer).
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.tw.Close(); err != nil {
		return err
	}
	return w.gz.Close()
}

// checkName refuses names that are not clean relative paths inside the
// archive's folder.
func checkName(name string) error {
	switch {
	case name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`):
		return refuse(name, 0, "not a relative path inside the archive")
	case path.Clean(name) != name || slices.Contains(strings.Split(name, "/"), ".."):
		return refuse(name, 0, "the path leaves the archive's folder or is not clean")
	case strings.ContainsAny(name, "\x00\r\n"):
		return refuse(name, 0, "control characters in the name")
	}
	return nil
}

// Entry is one entry of an archive after its manifest.
type Entry struct {
	Name string
	// Kind is set for a records entry.
	Kind *storage.Kind
	// Section and File are set for a file: the section and the path
	// inside it.
	Section, File string
	Size          int64
}

// Reader reads an archive as a stream.
type Reader struct {
	Manifest Manifest
	gz       *gzip.Reader
	tr       *tar.Reader
	cur      *Entry
	kindAt   int // index in storage.Kinds of the last records entry
	files    bool
}

// NewReader reads the archive's manifest and checks its format.
func NewReader(r io.Reader) (*Reader, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, &Error{Err: fmt.Errorf("not a teamchat export (a gzipped tar archive): %v", err)}
	}
	ar := &Reader{gz: gz, tr: tar.NewReader(gz), kindAt: -1}
	hdr, err := ar.tr.Next()
	if err != nil {
		return nil, &Error{Err: fmt.Errorf("not a teamchat export: %v", err)}
	}
	if hdr.Name != "manifest.json" || hdr.Typeflag != tar.TypeReg {
		return nil, refuse(hdr.Name, 0, "the archive must start with manifest.json")
	}
	if hdr.Size > MaxManifest {
		return nil, refuse(hdr.Name, 0, "%d bytes: larger than any manifest", hdr.Size)
	}
	dec := json.NewDecoder(io.LimitReader(ar.tr, hdr.Size))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ar.Manifest); err != nil {
		return nil, refuse(hdr.Name, 0, "%v", jsonProblem(err))
	}
	m := &ar.Manifest
	if m.Format != Format {
		return nil, refuse(hdr.Name, 0, "format %q is not %q", m.Format, Format)
	}
	if m.FormatVersion < 1 || m.FormatVersion > Version {
		return nil, refuse(hdr.Name, 0, "format version %d is not one this server reads (1 to %d): a newer teamchat made it", m.FormatVersion, Version)
	}
	for _, k := range m.Kinds {
		if storage.KindByName(k.Name) == nil {
			return nil, refuse(hdr.Name, 0, "unknown kind of record %q", k.Name)
		}
	}
	return ar, nil
}

// Next moves to the next entry; io.EOF at the end of the archive.
func (r *Reader) Next() (*Entry, error) {
	for {
		hdr, err := r.tr.Next()
		if errors.Is(err, io.EOF) {
			// The rest of the stream: the gzip trailer, whose checksum
			// says the whole archive arrived as written.
			if _, err := io.Copy(io.Discard, io.LimitReader(r.gz, 1<<20)); err != nil {
				return nil, &Error{Err: fmt.Errorf("the archive is broken or cut short: %v", err)}
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, &Error{Err: fmt.Errorf("the archive is broken or cut short: %v", err)}
		}
		if err := checkName(strings.TrimSuffix(hdr.Name, "/")); err != nil {
			return nil, err
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return nil, refuse(hdr.Name, 0, "links are not allowed in an archive")
		default:
			return nil, refuse(hdr.Name, 0, "not a regular file (tar type %q)", hdr.Typeflag)
		}
		e, err := r.classify(hdr)
		if err != nil {
			return nil, err
		}
		r.cur = e
		return e, nil
	}
}

func (r *Reader) classify(hdr *tar.Header) (*Entry, error) {
	e := &Entry{Name: hdr.Name, Size: hdr.Size}
	section, rest, _ := strings.Cut(hdr.Name, "/")
	switch section {
	case "records":
		if r.files {
			return nil, refuse(hdr.Name, 0, "records after the files")
		}
		kindName, file, ok := strings.Cut(rest, "/")
		if !ok || strings.Contains(file, "/") || !strings.HasSuffix(file, ".jsonl") {
			return nil, refuse(hdr.Name, 0, "want records/<kind>/<n>.jsonl")
		}
		at := slices.IndexFunc(storage.Kinds, func(k *storage.Kind) bool { return k.Name == kindName })
		if at < 0 {
			return nil, refuse(hdr.Name, 0, "unknown kind of record %q", kindName)
		}
		if at < r.kindAt {
			return nil, refuse(hdr.Name, 0, "%s records after %s ones: kinds come in their order", kindName, storage.Kinds[r.kindAt].Name)
		}
		if hdr.Size > MaxRecordsEntry {
			return nil, refuse(hdr.Name, 0, "%d bytes: larger than any records entry (%d)", hdr.Size, MaxRecordsEntry)
		}
		r.kindAt = at
		e.Kind = storage.Kinds[at]
	case Uploads, Emoji:
		if rest == "" {
			return nil, refuse(hdr.Name, 0, "a file without a name")
		}
		r.files = true
		e.Section, e.File = section, rest
	default:
		return nil, refuse(hdr.Name, 0, "unknown entry (not manifest.json, records/, uploads/ or emoji/)")
	}
	return e, nil
}

// Records reads the current records entry, calling fn with each record
// and its line number.
func (r *Reader) Records(fn func(rec any, line int) error) error {
	e := r.cur
	src := &errReader{r: io.LimitReader(r.tr, e.Size)}
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		rec, err := UnmarshalRecord(e.Kind, text)
		if err != nil && src.err != nil && !errors.Is(src.err, io.EOF) {
			err = fmt.Errorf("the archive is broken or cut short: %v", src.err)
		}
		if err != nil {
			return &Error{Entry: e.Name, Line: line, Err: err}
		}
		if err := fn(rec, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return refuse(e.Name, line+1, "a line longer than any record (%d bytes)", MaxLine)
		}
		return &Error{Entry: e.Name, Line: line + 1, Err: fmt.Errorf("the archive is broken or cut short: %v", err)}
	}
	return nil
}

// errReader remembers its reader's error.
type errReader struct {
	r   io.Reader
	err error
}

func (r *errReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil {
		r.err = err
	}
	return n, err
}

// Body is the current file entry's content: exactly its stated size.
func (r *Reader) Body() io.Reader { return r.tr }
