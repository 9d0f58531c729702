package rest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"

	chat "github.com/teamchat/chat"
)

// Files: POST /api/v1/user_uploads takes one file in a multipart body,
// spooled to a temporary file (to know it is the only one) and handed to
// the Service; the files themselves are served outside /api/v1, at
// /user_uploads/{realm_id}/{path} (with the API's credentials) and at the
// temporary URLs GET /api/v1/user_uploads/... hands out (without).

// uploadSlack is what a multipart body may carry beyond the file.
const uploadSlack = 1 << 20

// authedUpload adapts a Service method whose request carries one
// uploaded file (set by setFile); limit is the file's size limit.
func authedUpload[Req, Resp any](method, pattern string, fn func(*chat.Service, context.Context, chat.Caller, Req) (*Resp, error),
	setFile func(*Req, chat.FileUpload), limitMiB func(chat.Limits) int, exactlyOne string) endpoint {
	return endpoint{method: method, pattern: pattern, auth: userRequired, upload: true, req: reflect.TypeFor[Req](),
		serve: func(ctx context.Context, c *call) (any, []string, error) {
			limit := int64(limitMiB(c.h.svc.Limits()))<<20 + uploadSlack
			values, files, err := readUpload(c.r, limit)
			defer files.remove()
			var req Req
			if errors.Is(err, errUploadTooLarge) {
				// The Service refuses it with its own words.
				setFile(&req, chat.FileUpload{Size: limit + 1, Content: strings.NewReader("")})
				_, perr := decode(url.Values{}, c.path, &req)
				if perr != nil {
					return nil, nil, perr
				}
				resp, err := fn(c.h.svc, ctx, c.caller, req)
				return resp, nil, err
			}
			if err != nil {
				return nil, nil, err
			}
			ignored, err := decode(values, c.path, &req)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case len(files) != 1 && exactlyOne != "":
				return nil, nil, chat.BadRequest("%s", exactlyOne)
			case len(files) == 0:
				return nil, nil, chat.BadRequest("You must specify a file to upload")
			case len(files) > 1:
				return nil, nil, chat.BadRequest("You may only upload one file at a time")
			}
			f := files[0]
			if _, err := f.file.Seek(0, io.SeekStart); err != nil {
				return nil, nil, err
			}
			setFile(&req, chat.FileUpload{FileName: f.name, ContentType: f.contentType, Size: f.size, Content: f.file})
			resp, err := fn(c.h.svc, ctx, c.caller, req)
			return resp, ignored, err
		}}
}

// spooled is one uploaded file in a temporary file.
type spooled struct {
	name, contentType string
	size              int64
	file              *os.File
}

type spooledFiles []spooled

func (fs spooledFiles) remove() {
	for _, f := range fs {
		_ = f.file.Close()
		_ = os.Remove(f.file.Name())
	}
}

// readUpload reads a multipart body: its form values (with the query's)
// and its files, spooled. The body is limited to limit bytes.
func readUpload(r *http.Request, limit int64) (url.Values, spooledFiles, error) {
	values := r.URL.Query()
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" || params["boundary"] == "" {
		return values, nil, nil
	}
	body := http.MaxBytesReader(nil, r.Body, limit)
	mr := multipart.NewReader(body, params["boundary"])
	var files spooledFiles
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, files, uploadBodyError(err, limit)
		}
		if part.FileName() == "" {
			data, err := io.ReadAll(part)
			if err != nil {
				return nil, files, uploadBodyError(err, limit)
			}
			values.Add(part.FormName(), string(data))
			continue
		}
		tmp, err := os.CreateTemp("", "teamchat-upload-*")
		if err != nil {
			return nil, files, err
		}
		name := part.FileName()
		if u, err := url.PathUnescape(name); err == nil {
			name = u
		}
		f := spooled{name: name, contentType: part.Header.Get("Content-Type"), file: tmp}
		files = append(files, f)
		n, err := io.Copy(tmp, part)
		if err != nil {
			return nil, files, uploadBodyError(err, limit)
		}
		files[len(files)-1].size = n
	}
	return values, files, nil
}

// errUploadTooLarge: the body went past the limit.
var errUploadTooLarge = errors.New("upload too large")

func uploadBodyError(err error, _ int64) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errUploadTooLarge
	}
	return chat.BadRequest("Malformed multipart body")
}

// uploadsPrefix is where files are served, outside the API; emojiPrefix
// where custom emoji images are (public, as in the reference).
const (
	uploadsPrefix = "/user_uploads/"
	emojiPrefix   = "/user_avatars/"
)

// serveFile answers GET /user_uploads/{realm_id}/{path} (with the API's
// credentials) and /user_uploads/temporary/{token}/{name} (without): the
// file's bytes, or the reference's errors.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, path string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeMethodNotAllowed(w, []string{"GET"})
		return
	}
	ctx := r.Context()
	realmID, err := h.realm(ctx, r)
	if err != nil {
		writeError(w, h.log, r, err)
		return
	}
	emoji := strings.HasPrefix(path, emojiPrefix)
	rest, err := url.PathUnescape(strings.TrimPrefix(strings.TrimPrefix(path, uploadsPrefix), emojiPrefix))
	if err != nil {
		writeError(w, h.log, r, chat.BadRequest("Invalid path"))
		return
	}
	// The images and the temporary URLs need no credentials; the others
	// do. Either way, a request that is not authenticated counts against
	// its address.
	var file *chat.UploadedFile
	token, temporary := strings.CutPrefix(rest, "temporary/")
	if emoji || temporary {
		if h.limitedAddress(w, r) {
			return
		}
	}
	if emoji && strings.Contains(rest, "/avatars/") {
		file, err = h.svc.OpenAvatarImage(ctx, realmID, rest)
	} else if emoji {
		file, err = h.svc.OpenCustomEmojiImage(ctx, realmID, rest)
	} else if temporary {
		token, _, _ = strings.Cut(token, "/")
		file, err = h.svc.OpenTemporaryUpload(ctx, realmID, token)
	} else {
		var caller chat.Caller
		if caller, err = h.authenticate(ctx, r, realmID); err == nil {
			file, err = h.svc.OpenUpload(ctx, caller, rest)
		} else if h.limitedAddress(w, r) {
			return
		}
	}
	if err != nil {
		writeError(w, h.log, r, err)
		return
	}
	defer file.Close()
	w.Header().Set("Content-Type", file.ContentType)
	w.Header().Set("Content-Length", strconv.FormatInt(file.Size, 10))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "private, max-age=86400")
	disposition := "attachment"
	if strings.HasPrefix(file.ContentType, "image/") && file.ContentType != "image/svg+xml" {
		disposition = "inline"
	}
	w.Header().Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": file.FileName}))
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, file); err != nil {
		h.log.DebugContext(ctx, "serving a file ended early", "err", fmt.Sprint(err))
	}
}
