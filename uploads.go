package chat

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/teamchat/chat/storage"
	"github.com/teamchat/chat/storage/blob"
)

// Uploaded files. The bytes live in a blob store (WithBlobStore: a
// directory by default in examples/server, S3 for several machines); the
// database keeps each file's record and the messages that link it. A
// file may be downloaded by its uploader and by whoever may see a message
// that links it.

// WithBlobStore sets where uploaded files and custom emoji images are
// kept. Without one, uploads are refused.
func WithBlobStore(b blob.Store) Option { return func(s *Service) { s.blobs = b } }

// WithURLSigningKey sets the key that signs temporary download URLs, so
// that several servers accept each other's (by default a random key per
// Service).
func WithURLSigningKey(key []byte) Option { return func(s *Service) { s.signingKey = key } }

// FileUpload is one file of a multipart request.
type FileUpload struct {
	// FileName is the name the client gave the file.
	FileName string
	// ContentType is the client's; empty means guessed from the name.
	ContentType string
	// Size is the content's length in bytes.
	Size    int64
	Content io.Reader
}

// UploadFileRequest is the input of UploadFile (POST /user_uploads).
type UploadFileRequest struct {
	File FileUpload `json:"-"`
}

// UploadFileResponse is the success body of UploadFile.
type UploadFileResponse struct {
	URL string `json:"url"`
	// URI is the deprecated copy of URL.
	URI      string `json:"uri"`
	FileName string `json:"filename"`
}

var errUploadsOff = BadRequest("File uploads are not enabled on this server")

// UploadFile stores a file for the caller and returns its URL, which
// only they may open until a message links it.
func (s *Service) UploadFile(ctx context.Context, c Caller, req UploadFileRequest) (*UploadFileResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	if s.blobs == nil {
		return nil, errUploadsOff
	}
	f := req.File
	maxMiB := s.limits.MaxFileUploadSizeMiB
	if f.Size > int64(maxMiB)<<20 {
		return nil, BadRequest("File is larger than this server's configured maximum upload size (%d MiB).", maxMiB)
	}
	contentType := fileContentType(f)
	pathID, err := newPathID(realm.ID, sanitizeFileName(f.FileName))
	if err != nil {
		return nil, s.internal(ctx, "upload file", err)
	}
	if err := s.blobs.Put(ctx, pathID, f.Content, f.Size, contentType); err != nil {
		return nil, s.internal(ctx, "upload file", err)
	}
	a := &storage.Attachment{RealmID: realm.ID, OwnerID: me.ID, PathID: pathID, FileName: f.FileName,
		Size: f.Size, ContentType: contentType, CreateTime: s.nowUnix()}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		w.keepCallers()
		if err := w.CreateAttachment(ctx, a); err != nil {
			return err
		}
		return s.emitAttachment(ctx, w, "add", a, nil)
	})
	if err != nil {
		_ = s.blobs.Delete(context.WithoutCancel(ctx), pathID)
		return nil, s.internal(ctx, "upload file", err)
	}
	url := "/user_uploads/" + pathID
	return &UploadFileResponse{URL: url, URI: url, FileName: f.FileName}, nil
}

// fileContentType is the client's content type, or the one its name
// suggests, or application/octet-stream.
func fileContentType(f FileUpload) string {
	ct := f.ContentType
	if ct == "" {
		ct = mime.TypeByExtension(path.Ext(f.FileName))
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && ct != "" {
		ct = mt
	}
	if ct == "" || blob.ValidContentType(ct) != nil {
		return blob.DefaultContentType
	}
	return ct
}

// newPathID is the reference's layout: realm, one of 256 folders, a
// random part, the sanitized name.
func newPathID(realmID int64, name string) (string, error) {
	var b [19]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d/%x/%s/%s", realmID, b[0], base64.RawURLEncoding.EncodeToString(b[1:]), name), nil
}

var (
	fileNameBad    = regexp.MustCompile(`[^\p{L}\p{N}_\s.-]`)
	fileNameSpaces = regexp.MustCompile(`[-\s]+`)
)

// sanitizeFileName is the reference's sanitize_name: letters, digits,
// "_", "." and "-" (runs of spaces and dashes become one dash); unlike
// the reference, without leading dots.
func sanitizeFileName(name string) string {
	name = norm.NFKC.String(name)
	name = strings.TrimSpace(fileNameBad.ReplaceAllString(name, ""))
	name = fileNameSpaces.ReplaceAllString(name, "-")
	// Leading dots would hide the file (and the blob store refuses them).
	name = strings.TrimLeft(name, ".")
	if name == "" {
		return "uploaded-file"
	}
	for len(name) > blob.MaxSegmentLen {
		_, n := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-n]
	}
	return name
}

// UploadedFile is an uploaded file's content, to be closed by the caller.
type UploadedFile struct {
	io.ReadCloser
	FileName    string
	ContentType string
	Size        int64
}

// OpenUpload opens an uploaded file of the caller's organization by its
// path ID ("<realm>/..."), for its uploader or whoever may see a message
// that links it (GET /user_uploads/{realm_id}/{path}).
func (s *Service) OpenUpload(ctx context.Context, c Caller, pathID string) (*UploadedFile, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	a, err := s.reads().attachmentByPath(ctx, realm.ID, pathID)
	if err != nil {
		return nil, err
	}
	ok, err := s.mayOpenAttachment(ctx, s.reads(), realm, me, a)
	if err != nil {
		return nil, s.internal(ctx, "open upload", err)
	}
	if !ok {
		return nil, errFileForbidden
	}
	return s.openAttachment(ctx, a)
}

func (r reads) attachmentByPath(ctx context.Context, realmID int64, pathID string) (*storage.Attachment, error) {
	if r.s.blobs == nil || !strings.HasPrefix(pathID, strconv.FormatInt(realmID, 10)+"/") {
		return nil, errNoSuchFile
	}
	found, err := r.st.GetAttachmentsByPath(ctx, realmID, []string{pathID})
	if err != nil {
		return nil, r.s.internal(ctx, "open upload", err)
	}
	if len(found) == 0 {
		return nil, errNoSuchFile
	}
	return &found[0], nil
}

func (s *Service) openAttachment(ctx context.Context, a *storage.Attachment) (*UploadedFile, error) {
	rc, info, err := s.blobs.Open(ctx, a.PathID)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, errNoSuchFile
	} else if err != nil {
		return nil, s.internal(ctx, "open upload", err)
	}
	return &UploadedFile{ReadCloser: rc, FileName: a.FileName, ContentType: info.ContentType, Size: info.Size}, nil
}

// attachmentMessagesChecked bounds the linking messages looked at to
// decide access.
const attachmentMessagesChecked = 100

// mayOpenAttachment is the reference's validate_attachment_request: the
// owner, or someone who may see one of the messages that link it.
func (s *Service) mayOpenAttachment(ctx context.Context, r reads, realm *storage.Realm, me *storage.User, a *storage.Attachment) (bool, error) {
	if a.OwnerID == me.ID {
		return true, nil
	}
	ids, err := r.st.ListAttachmentMessages(ctx, realm.ID, a.ID, attachmentMessagesChecked)
	if err != nil || len(ids) == 0 {
		return false, err
	}
	rs, err := r.readerState(ctx, realm, me, ids)
	if err != nil {
		return false, err
	}
	var msgs []storage.Message
	for _, id := range ids {
		if ms := rs.msgs[id]; ms != nil {
			msgs = append(msgs, *ms.m)
		}
	}
	ok, err := s.accessible(ctx, r, realm, me, msgs, rs)
	return len(ok) > 0, err
}

// claimUploads links the message to the uploaded files it links that its
// sender may share (their own, or ones they may open).
func (s *Service) claimUploads(ctx context.Context, w *writeTx, realm *storage.Realm, sender *storage.User, messageID int64, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	found, err := w.GetAttachmentsByPath(ctx, realm.ID, paths)
	if err != nil {
		return err
	}
	var ids []int64
	for i := range found {
		ok, err := s.mayOpenAttachment(ctx, w.reads(), realm, sender, &found[i])
		if err != nil {
			return err
		}
		if ok {
			ids = append(ids, found[i].ID)
		}
	}
	if err := w.LinkAttachments(ctx, realm.ID, messageID, ids); err != nil {
		return err
	}
	// The sender's own files now list the message.
	for i := range found {
		if found[i].OwnerID != sender.ID || !slices.Contains(ids, found[i].ID) {
			continue
		}
		linked, err := w.ListAttachmentMessages(ctx, realm.ID, found[i].ID, attachmentMessagesShown)
		if err != nil {
			return err
		}
		msgs, err := w.GetMessagesByID(ctx, realm.ID, linked)
		if err != nil {
			return err
		}
		if err := s.emitAttachment(ctx, w, "update", &found[i], msgs); err != nil {
			return err
		}
	}
	return nil
}

// attachmentMessagesShown bounds the messages an attachment event lists.
const attachmentMessagesShown = 100

// AttachmentEvent tells a user about one of their uploaded files: added,
// or linked from a message ("update").
type AttachmentEvent struct {
	Op              string         `json:"op"`
	Attachment      AttachmentView `json:"attachment"`
	UploadSpaceUsed int64          `json:"upload_space_used"`
}

func (AttachmentEvent) EventType() string { return "attachment" }

// AttachmentView is an uploaded file as its owner sees it.
type AttachmentView struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	PathID string `json:"path_id"`
	Size   int64  `json:"size"`
	// CreateTime is in milliseconds.
	CreateTime int64 `json:"create_time"`
	// Messages are the messages that link the file.
	Messages []AttachmentMessage `json:"messages"`
}

// AttachmentMessage is a message linking a file; DateSent is in
// milliseconds.
type AttachmentMessage struct {
	ID       int64 `json:"id"`
	DateSent int64 `json:"date_sent"`
}

// emitAttachment tells the file's owner about it, with the organization's
// upload total.
func (s *Service) emitAttachment(ctx context.Context, w *writeTx, op string, a *storage.Attachment, msgs []storage.Message) error {
	used, err := w.RealmUploadBytes(ctx, a.RealmID)
	if err != nil {
		return err
	}
	view := AttachmentView{ID: a.ID, Name: a.FileName, PathID: a.PathID, Size: a.Size, CreateTime: a.CreateTime * 1000,
		Messages: []AttachmentMessage{}}
	for _, m := range msgs {
		view.Messages = append(view.Messages, AttachmentMessage{ID: m.ID, DateSent: m.DateSent * 1000})
	}
	w.emit(toUsers(a.OwnerID), AttachmentEvent{Op: op, Attachment: view, UploadSpaceUsed: used})
	return nil
}

// GetFileTemporaryURLRequest is the input of GetFileTemporaryURL (GET
// /user_uploads/{realm_id_str}/{filename}).
type GetFileTemporaryURLRequest struct {
	RealmIDStr string `json:"realm_id_str"`
	Filename   string `json:"filename"`
}

// GetFileTemporaryURLResponse is the success body of GetFileTemporaryURL.
type GetFileTemporaryURLResponse struct {
	URL string `json:"url"`
}

// temporaryURLLifetime is how long a temporary URL works (the
// reference's 60 seconds).
const temporaryURLLifetime = 60 * time.Second

// GetFileTemporaryURL returns a URL that opens the file without
// credentials for a minute, for a caller who may open it.
func (s *Service) GetFileTemporaryURL(ctx context.Context, c Caller, req GetFileTemporaryURLRequest) (*GetFileTemporaryURLResponse, error) {
	me, realm, err := s.reads().actor(ctx, c)
	if err != nil {
		return nil, err
	}
	a, err := s.reads().attachmentByPath(ctx, realm.ID, req.RealmIDStr+"/"+req.Filename)
	if err != nil {
		return nil, err
	}
	ok, err := s.mayOpenAttachment(ctx, s.reads(), realm, me, a)
	if err != nil {
		return nil, s.internal(ctx, "temporary url", err)
	}
	if !ok {
		return nil, errFileForbidden
	}
	expires := s.now().Add(temporaryURLLifetime).Unix()
	payload := strconv.FormatInt(expires, 10) + ":" + a.PathID
	token := base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + s.signURL(payload)
	return &GetFileTemporaryURLResponse{URL: "/user_uploads/temporary/" + token + "/" + path.Base(a.PathID)}, nil
}

func (s *Service) signURL(payload string) string {
	mac := hmac.New(sha256.New, s.signingKey)
	mac.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// OpenTemporaryUpload opens a file by a temporary URL's token (no
// credentials): an expired or forged token is answered as a missing file.
func (s *Service) OpenTemporaryUpload(ctx context.Context, realmID int64, token string) (*UploadedFile, error) {
	enc, sig, ok := strings.Cut(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil || !hmac.Equal([]byte(sig), []byte(s.signURL(string(raw)))) {
		return nil, errNoSuchFile
	}
	exp, pathID, _ := strings.Cut(string(raw), ":")
	expires, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || s.now().Unix() > expires {
		return nil, errNoSuchFile
	}
	a, err := s.reads().attachmentByPath(ctx, realmID, pathID)
	if err != nil {
		return nil, err
	}
	return s.openAttachment(ctx, a)
}
