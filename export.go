package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/teamchat/chat/internal/archive"
	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/blob"
)

// Export and import of whole organizations (see import.go and the README's
// "Moving an organization"). Both are administrative operations of the
// host, like CreateRealm: they take no Caller and check no permission.
// They read and write through the store's bulk interface
// (storage.BulkStore), not the Service's write path.

// Progress reports how far an export or import is.
type Progress struct {
	// Kind is the kind of record being read or written, or "files".
	Kind string
	// Records and Files are done so far, of TotalRecords and TotalFiles.
	Records, TotalRecords int64
	Files, TotalFiles     int64
}

// ExportRequest is the input of ExportRealm.
type ExportRequest struct {
	RealmID int64
	// Progress, if set, is called as the export goes (about every
	// thousand records, and for each file).
	Progress func(Progress)
}

// ExportResult says what an export wrote.
type ExportResult struct {
	Manifest archive.Manifest
	// MissingFiles are uploads and emoji images whose records are in the
	// archive but whose content the blob store did not have.
	MissingFiles []string
}

// exportPage is how many records the store reads at a time.
const exportPage = 2000

func (s *Service) bulkStore() (storage.BulkStore, error) {
	b, ok := s.store.(storage.BulkStore)
	if !ok {
		return nil, fmt.Errorf("the store (%T) cannot export or import", s.store)
	}
	return b, nil
}

// ExportRealm writes the organization to w in the export format (package
// internal/archive documents it): one consistent snapshot of the
// database, streamed, so that the memory it takes does not grow with the
// organization. Cancelling ctx stops it; what was written to w is then
// not a whole archive.
func (s *Service) ExportRealm(ctx context.Context, w io.Writer, req ExportRequest) (*ExportResult, error) {
	if _, err := s.bulkStore(); err != nil {
		return nil, s.internal(ctx, "export realm", err)
	}
	var res *ExportResult
	err := s.store.ReadSnapshot(ctx, func(st storage.Store, _ storage.Snapshot) error {
		var err error
		res, err = s.exportSnapshot(ctx, st, w, req)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, NotFound("No organization with ID %d", req.RealmID)
	}
	if err != nil {
		return nil, s.internal(ctx, "export realm", err)
	}
	return res, nil
}

// exportFile is one file to export: its blob key and archive name.
type exportFile struct {
	section, name, key string
	size               int64
}

func (s *Service) exportSnapshot(ctx context.Context, st storage.Store, w io.Writer, req ExportRequest) (*ExportResult, error) {
	b := st.(storage.BulkStore)
	realm, err := st.GetRealm(ctx, req.RealmID)
	if err != nil {
		return nil, err
	}
	schema, schemaNumber, err := b.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	m := archive.Manifest{Format: archive.Format, FormatVersion: archive.Version, Schema: schema, SchemaVersion: schemaNumber,
		Created: s.nowUnix(), Source: "teamchat", Realm: archive.RealmInfo{ID: realm.ID, Name: realm.Name, URL: realm.URL},
		Files: map[string]int64{}}
	var total int64
	for _, k := range storage.Kinds {
		stats, err := b.KindStats(ctx, realm.ID, k)
		if err != nil {
			return nil, err
		}
		m.Kinds = append(m.Kinds, archive.KindInfo{Name: k.Name, Records: stats.Records, MaxID: stats.MaxID})
		total += stats.Records
	}
	files, missing, err := s.exportFiles(ctx, st, realm.ID)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		m.Files[f.section]++
	}
	aw, err := archive.NewWriter(w, m)
	if err != nil {
		return nil, err
	}
	p := Progress{TotalRecords: total, TotalFiles: int64(len(files))}
	for _, k := range storage.Kinds {
		p.Kind = k.Name
		err := b.ScanRecords(ctx, realm.ID, k, exportPage, func(recs []any) error {
			for _, rec := range recs {
				if err := aw.Record(k, rec); err != nil {
					return err
				}
			}
			p.Records += int64(len(recs))
			report(req.Progress, p)
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
	}
	p.Kind = "files"
	for _, f := range files {
		if err := s.exportBlob(ctx, aw, f); err != nil {
			return nil, err
		}
		p.Files++
		report(req.Progress, p)
	}
	if err := aw.Close(); err != nil {
		return nil, err
	}
	return &ExportResult{Manifest: m, MissingFiles: missing}, nil
}

func report(fn func(Progress), p Progress) {
	if fn != nil {
		fn(p)
	}
}

// exportFiles lists the organization's uploads and emoji images that the
// blob store holds (and those it lacks).
func (s *Service) exportFiles(ctx context.Context, st storage.Store, realmID int64) (files []exportFile, missing []string, err error) {
	b := st.(storage.BulkStore)
	prefix := strconv.FormatInt(realmID, 10) + "/"
	var want []exportFile
	err = b.ScanRecords(ctx, realmID, storage.KindByName("attachments"), exportPage, func(recs []any) error {
		for _, rec := range recs {
			a := rec.(*storage.Attachment)
			want = append(want, exportFile{section: archive.Uploads, name: strings.TrimPrefix(a.PathID, prefix), key: a.PathID, size: a.Size})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	emoji, err := st.ListRealmEmoji(ctx, realmID)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range emoji {
		want = append(want, exportFile{section: archive.Emoji, name: e.FileName, key: emojiKey(realmID, e.FileName), size: -1})
	}
	for _, f := range want {
		if s.blobs == nil {
			missing = append(missing, f.key)
			continue
		}
		info, err := s.blobs.Stat(ctx, f.key)
		if errors.Is(err, blob.ErrNotFound) {
			missing = append(missing, f.key)
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("file %s: %w", f.key, err)
		}
		f.size = info.Size
		files = append(files, f)
	}
	return files, missing, nil
}

func (s *Service) exportBlob(ctx context.Context, aw *archive.Writer, f exportFile) error {
	rc, _, err := s.blobs.Open(ctx, f.key)
	if err != nil {
		return fmt.Errorf("file %s: %w", f.key, err)
	}
	defer rc.Close()
	if err := aw.File(f.section, f.name, f.size, rc); err != nil {
		return fmt.Errorf("file %s: %w", f.key, err)
	}
	return nil
}
