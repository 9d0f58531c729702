package chat

import (
	"context"
	"errors"
	"io"

	"github.com/teamchat/chat/internal/archive"
	"github.com/teamchat/chat/storage"
)

// An import is a pipeline of two goroutines, so that the two halves of
// its work overlap on two cores: one reads the archive (decompressing,
// decoding and shifting records, a batch at a time), the other checks
// references and writes to the database. Files are handed over one at a
// time: the reader waits while the writer streams the file's body.

// importItem is what the reader hands the writer: a batch of records of
// one entry, or a file (whose body the writer reads before done), or the
// reader's error.
type importItem struct {
	e     *archive.Entry
	recs  []any
	lines []int
	done  chan struct{}
	err   error
}

func (im *importer) run(ctx context.Context, ar *archive.Reader) error {
	if err := im.reserve(ctx); err != nil {
		return err
	}
	if im.m.NewOrganization {
		if err := im.newOrganization(ctx); err != nil {
			return err
		}
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	items := make(chan importItem, 2)
	go im.read(rctx, ar, items)
	var lateKind *storage.Kind
	for it := range items {
		if it.err != nil {
			return it.err
		}
		if lateKind != nil && it.e.Kind != lateKind {
			if err := im.finishLate(ctx, lateKind); err != nil {
				return err
			}
			lateKind = nil
		}
		if it.e.Kind == nil {
			err := im.file(ctx, ar, it.e)
			close(it.done)
			if err != nil {
				return err
			}
			continue
		}
		if len(it.e.Kind.Late) > 0 {
			lateKind = it.e.Kind
		}
		if err := im.insert(ctx, it.e, it.recs, it.lines); err != nil {
			return err
		}
		report(im.req.Progress, im.progress)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	if lateKind != nil {
		if err := im.finishLate(ctx, lateKind); err != nil {
			return err
		}
	}
	return im.finish(ctx)
}

// read is the reader's goroutine: it ends when the archive does, on an
// error (sent), or when ctx ends (the writer stopped).
func (im *importer) read(ctx context.Context, ar *archive.Reader, items chan<- importItem) {
	defer close(items)
	send := func(it importItem) bool {
		select {
		case items <- it:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		e, err := ar.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err == nil && e.Kind != nil {
			err = im.readRecords(ar, e, send)
		} else if err == nil {
			it := importItem{e: e, done: make(chan struct{})}
			if !send(it) {
				return
			}
			select {
			case <-it.done:
			case <-ctx.Done():
				return
			}
			continue
		}
		if err != nil {
			send(importItem{err: err})
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// errStopped ends a read whose writer stopped.
var errStopped = errors.New("import stopped")

// readRecords decodes and shifts one records entry, a batch at a time.
func (im *importer) readRecords(ar *archive.Reader, e *archive.Entry, send func(importItem) bool) error {
	k := e.Kind
	if im.realm == nil && k.Name != "realms" {
		return &archive.Error{Entry: e.Name, Err: errors.New("records before the organization's (realms) record")}
	}
	it := importItem{e: e}
	flush := func() error {
		if !send(it) {
			return errStopped
		}
		it = importItem{e: e}
		return nil
	}
	err := ar.Records(func(rec any, line int) error {
		for _, conv := range im.convert {
			if err := conv(k, rec); err != nil {
				return &archive.Error{Entry: e.Name, Line: line, Err: err}
			}
		}
		if err := im.remap(e, line, rec); err != nil {
			return err
		}
		it.recs, it.lines = append(it.recs, rec), append(it.lines, line)
		if len(it.recs) == importBatch {
			return flush()
		}
		return nil
	})
	if err == nil && len(it.recs) > 0 {
		err = flush()
	}
	return err
}
