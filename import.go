package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/teamchat/chat/internal/archive"
	"github.com/teamchat/chat/storage"
)

// ImportRealm loads an organization from an archive in the export format.
//
// It is an administrative bulk load and the one documented way around the
// Service's write path: the whole import is one database transaction
// (all or nothing: on any error the database is as it was, and files
// already stored are deleted), it publishes no events (no client can be
// following an organization that did not exist), and it invalidates the
// Service's caches of the organization once committed. On SQLite the
// transaction holds the only writer until it ends: other writes wait.
//
// IDs are kept when the database has none of a kind yet (an import into
// an empty database, the move between SQLite and PostgreSQL); otherwise
// each kind's IDs are shifted past the database's greatest, and every
// reference (columns, and IDs inside mentions, links, edit histories,
// drafts and file paths) is shifted with them. The organization is
// served at req.URL, or else at the archive's URL; an organization
// already served there is a conflict.
//
// An archive is refused with a KindInvalid error that names the entry
// and line at fault (see package internal/archive for what is refused),
// and when it refers to records it does not hold, when its counts differ
// from its manifest's (cut short), or when it comes from a newer schema
// than the database's. An archive of an older schema is converted
// (schemaConversions).
func (s *Service) ImportRealm(ctx context.Context, r io.Reader, req ImportRequest) (*ImportResult, error) {
	res, err := s.importRealm(ctx, r, req)
	if err != nil {
		var ae *archive.Error
		if errors.As(err, &ae) {
			return nil, BadRequest("Invalid archive: %s", ae.Error())
		}
		return nil, s.internal(ctx, "import realm", err)
	}
	s.InvalidateCaches(res.RealmID)
	s.log.InfoContext(ctx, "organization imported", "realm_id", res.RealmID, "records", res.Records, "files", res.Files, "ids_kept", res.IDsKept)
	return res, nil
}

// ImportRequest is the input of ImportRealm.
type ImportRequest struct {
	// URL is where the organization will be served (default: the
	// archive's).
	URL string
	// Progress, if set, is called as the import goes.
	Progress func(Progress)
}

// ImportResult says what an import made.
type ImportResult struct {
	RealmID int64
	// IDsKept: every record kept its ID.
	IDsKept        bool
	Records, Files int64
	// Counts are the records of each kind.
	Counts map[string]int64
}

// importBatch is how many records go to the store at once.
const importBatch = 400

// formatFirstSchema is the schema of the first version of the export
// format: no archive comes from an older one.
const formatFirstSchema = 28

// schemaConversions converts the records of an archive made at schema
// n-1 to schema n, for every migration n after formatFirstSchema. A nil
// conversion means the migration changes nothing an archive holds (or
// only adds columns whose default is their Go zero value). A migration
// without an entry cannot read older archives: they are refused.
var schemaConversions = map[int]func(k *storage.Kind, rec any) error{
	29: nil, // the fleet's tables: servers, not an organization's data
	30: nil, // indexes only
	// The internal bots and the email gateway: archives of 0030 and before
	// come only from builds of this release's development (the format
	// began at 0028) and hold no channel email address; their organization
	// gets its internal bots on first use.
	31: nil,
}

type importer struct {
	s       *Service
	tx      storage.Store
	b       storage.BulkStore
	m       *archive.Manifest
	req     ImportRequest
	realm   *storage.Realm
	base    map[string]int64
	shifted bool
	// oldRealm is the archive's realm ID (for paths that hold it).
	oldRealm int64
	counts   map[string]int64
	files    map[string]int64
	deferred []pendingRef
	late     []any
	// fieldTypes are the custom profile fields' types, by (new) ID.
	fieldTypes map[int64]int
	// stored are the blob keys written, deleted if the import fails.
	stored   []string
	progress Progress
	convert  []func(k *storage.Kind, rec any) error
	// groups are a new organization's system groups, by name.
	groups map[string]int64
}

// pendingRef is a reference checked once every record is in (to a
// record of the same kind or a later one).
type pendingRef struct {
	entry  string
	line   int
	column string
	kind   string
	id     int64
}

func (s *Service) importRealm(ctx context.Context, r io.Reader, req ImportRequest) (*ImportResult, error) {
	b, err := s.bulkStore()
	if err != nil {
		return nil, err
	}
	ar, err := archive.NewReader(r)
	if err != nil {
		return nil, err
	}
	im := &importer{s: s, m: &ar.Manifest, req: req, base: map[string]int64{}, counts: map[string]int64{},
		files: map[string]int64{}, fieldTypes: map[int64]int{}}
	if im.convert, err = im.conversions(ctx, b); err != nil {
		return nil, err
	}
	for _, k := range im.m.Kinds {
		im.progress.TotalRecords += k.Records
	}
	for _, n := range im.m.Files {
		im.progress.TotalFiles += n
	}
	err = s.store.InTx(ctx, func(tx storage.Store) error {
		im.tx, im.b = tx, tx.(storage.BulkStore)
		return im.run(ctx, ar)
	})
	if err != nil {
		for _, key := range im.stored {
			_ = s.blobs.Delete(context.WithoutCancel(ctx), key)
		}
		if errors.Is(err, storage.ErrConflict) {
			return nil, &archive.Error{Err: fmt.Errorf("%v: a record repeats a unique value the database already holds (an organization's URL, a file's path, an invitation's key)", err)}
		}
		return nil, err
	}
	res := &ImportResult{RealmID: im.realm.ID, IDsKept: !im.shifted, Files: im.progress.Files, Counts: im.counts}
	for _, n := range im.counts {
		res.Records += n
	}
	return res, nil
}

// conversions checks the archive's schema against the database's.
func (im *importer) conversions(ctx context.Context, b storage.BulkStore) ([]func(*storage.Kind, any) error, error) {
	name, have, err := b.SchemaVersion(ctx)
	if err != nil {
		return nil, err
	}
	m := im.m
	switch {
	case m.SchemaVersion > have:
		return nil, &archive.Error{Entry: "manifest.json", Err: fmt.Errorf("the archive comes from a newer schema (%s) than this database's (%s): import it with a newer teamchat", m.Schema, name)}
	case m.SchemaVersion < formatFirstSchema:
		return nil, &archive.Error{Entry: "manifest.json", Err: fmt.Errorf("schema %d is older than any export format", m.SchemaVersion)}
	}
	var out []func(*storage.Kind, any) error
	for n := m.SchemaVersion + 1; n <= have; n++ {
		conv, ok := schemaConversions[n]
		if !ok {
			return nil, &archive.Error{Entry: "manifest.json", Err: fmt.Errorf("the archive comes from schema %s, and migration %04d has no conversion of archives: import it with the teamchat that made it, then upgrade", m.Schema, n)}
		}
		if conv != nil {
			out = append(out, conv)
		}
	}
	return out, nil
}

// reserve finds each kind's base, the shift of its IDs.
func (im *importer) reserve(ctx context.Context) error {
	for _, k := range storage.Kinds {
		info := im.m.Kind(k.Name)
		if !k.HasID() || info.Records == 0 {
			continue
		}
		base, err := im.b.ReserveIDs(ctx, k, info.MaxID)
		if err != nil {
			return err
		}
		im.base[k.Name] = base
		if base != 0 && info.Records > 0 {
			im.shifted = true
		}
	}
	return nil
}

// columnRefs lists the referring columns of a kind.
func columnRefs(k *storage.Kind) map[string]storage.Ref {
	out := map[string]storage.Ref{}
	for _, c := range storage.Columns(reflect.TypeOf(k.New())) {
		if r, ok := k.RefOf(c.Name); ok {
			out[c.Name] = r
		}
	}
	return out
}

// remap moves one record into the target: its realm, its shifted ID and
// references, and (when shifting) the IDs inside its text.
func (im *importer) remap(e *archive.Entry, line int, rec any) error {
	k := e.Kind
	fail := func(format string, args ...any) error {
		return &archive.Error{Entry: e.Name, Line: line, Err: fmt.Errorf(format, args...)}
	}
	if k.HasID() {
		id := storage.ColumnValue(rec, "id")
		if id.Int() < 1 || id.Int() > im.m.Kind(k.Name).MaxID {
			return fail("ID %d is outside the manifest's range for %s (1 to %d)", id.Int(), k.Name, im.m.Kind(k.Name).MaxID)
		}
		id.SetInt(id.Int() + im.base[k.Name])
	}
	if k.Name == "realms" {
		if err := im.takeRealm(rec.(*storage.Realm)); err != nil {
			return fail("%v", err)
		}
	} else {
		storage.ColumnValue(rec, "realm_id").SetInt(im.realm.ID)
	}
	for col, ref := range columnRefs(k) {
		v := storage.ColumnValue(rec, col)
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				continue
			}
			v = v.Elem()
		}
		if v.Int() == 0 {
			continue
		}
		if v.Int() < 0 {
			return fail("%s: a negative ID", col)
		}
		v.SetInt(v.Int() + im.base[ref.Kind])
	}
	if im.shifted || im.oldRealm != im.realm.ID {
		if err := im.remapText(k, rec); err != nil {
			return fail("%v", err)
		}
	}
	if k.Name == "custom_profile_fields" {
		f := rec.(*storage.ProfileField)
		im.fieldTypes[f.ID] = f.FieldType
	}
	return nil
}

// takeRealm makes the archive's organization record the target's.
func (im *importer) takeRealm(r *storage.Realm) error {
	if im.realm != nil {
		return errors.New("a second organization record")
	}
	if im.m.NewOrganization {
		return errors.New("an organization record in an archive that asks for a new organization")
	}
	im.oldRealm = r.ID - im.base["realms"]
	if im.req.URL != "" {
		u, host, err := parseRealmURL(im.req.URL)
		if err != nil {
			return err
		}
		r.URL, r.Host = u, host
		r.StringID = strings.SplitN(hostOnly(host), ".", 2)[0]
	}
	im.realm = r
	return nil
}

// parseRealmURL checks an organization URL as CreateRealm does.
func parseRealmURL(raw string) (string, string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return "", "", fmt.Errorf("invalid organization URL '%s': it must be http(s)://host[:port]", raw)
	}
	host := strings.ToLower(u.Host)
	return u.Scheme + "://" + host, host, nil
}

// insert checks a batch's references and writes it.
func (im *importer) insert(ctx context.Context, e *archive.Entry, batch []any, lines []int) error {
	k := e.Kind
	if k.Name == "realms" {
		if _, err := im.tx.GetRealmByHost(ctx, im.realm.Host); err == nil {
			return &archive.Error{Entry: e.Name, Err: fmt.Errorf("an organization is already served at %s", im.realm.Host)}
		}
	}
	order := slices.Index(storage.Kinds, k)
	byKind := map[string][]int64{}
	where := map[string]map[int64]int{}
	for col, ref := range columnRefs(k) {
		if ref.Bound {
			continue
		}
		target := storage.KindByName(ref.Kind)
		for i, rec := range batch {
			id := refValue(rec, col)
			if id == 0 {
				continue
			}
			if slices.Index(storage.Kinds, target) >= order {
				im.deferred = append(im.deferred, pendingRef{entry: e.Name, line: lines[i], column: col, kind: ref.Kind, id: id})
				continue
			}
			byKind[ref.Kind] = append(byKind[ref.Kind], id)
			if where[ref.Kind] == nil {
				where[ref.Kind] = map[int64]int{}
			}
			if _, ok := where[ref.Kind][id]; !ok {
				where[ref.Kind][id] = lines[i]
			}
		}
	}
	for kindName, ids := range byKind {
		missing, err := im.b.MissingIDs(ctx, im.realm.ID, storage.KindByName(kindName), ids)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			return &archive.Error{Entry: e.Name, Line: where[kindName][missing[0]],
				Err: fmt.Errorf("refers to %s %d, which the archive does not hold", kindName, missing[0]-im.base[kindName])}
		}
	}
	if err := im.b.InsertRecords(ctx, k, batch); err != nil {
		return fmt.Errorf("%s (lines %d to %d): %w", e.Name, lines[0], lines[len(lines)-1], err)
	}
	if len(k.Late) > 0 {
		for _, rec := range batch {
			for _, c := range k.Late {
				if refValue(rec, c) != 0 {
					im.late = append(im.late, rec)
					break
				}
			}
		}
	}
	im.counts[k.Name] += int64(len(batch))
	im.progress.Kind = k.Name
	im.progress.Records += int64(len(batch))
	return nil
}

// refValue is the ID a column holds (0 for NULL).
func refValue(rec any, col string) int64 {
	v := storage.ColumnValue(rec, col)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0
		}
		v = v.Elem()
	}
	return v.Int()
}

func (im *importer) finishLate(ctx context.Context, k *storage.Kind) error {
	if err := im.b.SetLate(ctx, k, im.late); err != nil {
		return err
	}
	im.late = nil
	return nil
}

// file stores one file of the archive.
func (im *importer) file(ctx context.Context, ar *archive.Reader, e *archive.Entry) error {
	if im.realm == nil {
		return &archive.Error{Entry: e.Name, Err: errors.New("a file before the organization's record")}
	}
	if im.s.blobs == nil {
		return &archive.Error{Entry: e.Name, Err: errors.New("this server keeps no files (no blob store): it cannot import the archive's files")}
	}
	var key, contentType string
	switch e.Section {
	case archive.Uploads:
		key = fmt.Sprintf("%d/%s", im.realm.ID, e.File)
		as, err := im.tx.GetAttachmentsByPath(ctx, im.realm.ID, []string{key})
		if err != nil {
			return err
		}
		if len(as) == 0 {
			return &archive.Error{Entry: e.Name, Err: errors.New("no attachment record has this file")}
		}
		if as[0].Size != e.Size {
			return &archive.Error{Entry: e.Name, Err: fmt.Errorf("%d bytes, but its attachment record says %d", e.Size, as[0].Size)}
		}
		contentType = as[0].ContentType
	case archive.Emoji:
		emoji, err := im.tx.ListRealmEmoji(ctx, im.realm.ID)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(emoji, func(x storage.RealmEmoji) bool { return x.FileName == e.File }) {
			return &archive.Error{Entry: e.Name, Err: errors.New("no custom emoji record has this image")}
		}
		if e.Size > int64(im.s.limits.MaxFileUploadSizeMiB)<<20 {
			return &archive.Error{Entry: e.Name, Err: fmt.Errorf("%d bytes: larger than any emoji image", e.Size)}
		}
		key, contentType = emojiKey(im.realm.ID, e.File), mime.TypeByExtension(path.Ext(e.File))
	}
	im.stored = append(im.stored, key)
	if err := im.s.blobs.Put(ctx, key, io.LimitReader(ar.Body(), e.Size), e.Size, contentType); err != nil {
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	im.files[e.Section]++
	im.progress.Kind = "files"
	im.progress.Files++
	report(im.req.Progress, im.progress)
	return nil
}

// finish checks the deferred references and the counts, and lets the
// store recompute what it keeps per organization.
func (im *importer) finish(ctx context.Context) error {
	if im.realm == nil {
		return &archive.Error{Err: errors.New("the archive holds no organization record")}
	}
	byKind := map[string][]int64{}
	for _, p := range im.deferred {
		byKind[p.kind] = append(byKind[p.kind], p.id)
	}
	for kindName, ids := range byKind {
		missing, err := im.b.MissingIDs(ctx, im.realm.ID, storage.KindByName(kindName), ids)
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			for _, p := range im.deferred {
				if p.kind == kindName && p.id == missing[0] {
					return &archive.Error{Entry: p.entry, Line: p.line,
						Err: fmt.Errorf("%s refers to %s %d, which the archive does not hold", p.column, kindName, p.id-im.base[kindName])}
				}
			}
		}
	}
	for _, k := range storage.Kinds {
		want := im.m.Kind(k.Name).Records
		if got := im.counts[k.Name]; got != want {
			return &archive.Error{Err: fmt.Errorf("the archive holds %d %s records, its manifest says %d: it was cut short or changed", got, k.Name, want)}
		}
	}
	sections := map[string]bool{}
	for section := range im.m.Files {
		sections[section] = true
	}
	for section := range im.files {
		sections[section] = true
	}
	for section := range sections {
		if got, want := im.files[section], im.m.Files[section]; got != want {
			return &archive.Error{Err: fmt.Errorf("the archive holds %d %s files, its manifest says %d: it was cut short or changed", got, section, want)}
		}
	}
	if im.m.NewOrganization {
		if err := im.finishNewOrganization(ctx); err != nil {
			return err
		}
	}
	return im.b.FinishImport(ctx, im.realm.ID)
}
