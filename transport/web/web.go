package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
)

//go:embed static
var static embed.FS

// AssetPrefix is the path below which the client's files are served; the
// page itself is at "/".
const AssetPrefix = "/web/"

// JoinPrefix starts the invitation links the server hands out
// (<organization URL>/join/<key>/): the handler sends the browser on to the
// page's join form, with the key in the page's hash (a relative redirect,
// so it works under a prefix too, and the key is not sent again).
const JoinPrefix = "/join/"

// joinKey is what an invitation key may look like.
var joinKey = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ContentSecurityPolicy is sent with every file of the client. Scripts,
// styles, images and connections come from the page's own origin only;
// inline scripts, inline event handlers, javascript: URLs, plugins, frames
// and form submissions are refused; no other site may frame the page; and
// Trusted Types let HTML reach the document only through the one policy
// that inserts the server's rendered message HTML.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types teamchat-message"

// Option configures a Handler.
type Option func(*Handler)

// WithNext hands every request that is not for the client to next (the
// REST handler, typically), so one handler serves a whole site. Without
// it such requests are answered 404.
func WithNext(next http.Handler) Option { return func(h *Handler) { h.next = next } }

// Handler serves the web client: the page at "/" and its files below
// AssetPrefix, from files embedded in the binary.
type Handler struct {
	files map[string]asset // by request path
	next  http.Handler
}

type asset struct {
	body        []byte
	contentType string
	etag        string
	// gz is the body gzipped (text files), served to browsers that take
	// it, with its own ETag.
	gz     []byte
	gzETag string
}

// NewHandler returns the web client's handler.
func NewHandler(opts ...Option) *Handler {
	h := &Handler{files: loadAssets()}
	for _, o := range opts {
		o(h)
	}
	return h
}

// loadAssets reads the embedded files once, with their types and ETags.
func loadAssets() map[string]asset {
	files := map[string]asset{}
	err := fs.WalkDir(static, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		tag := base64.RawURLEncoding.EncodeToString(sum[:12])
		a := asset{body: body, contentType: contentType(name), etag: `"` + tag + `"`}
		if compressible(a.contentType) {
			a.gz, a.gzETag = gzipped(body), `"`+tag+`-gz"`
		}
		rel := strings.TrimPrefix(name, "static/")
		if rel == "index.html" {
			files["/"] = a
		} else {
			files[AssetPrefix+rel] = a
		}
		return nil
	})
	if err != nil {
		panic("web: embedded files: " + err.Error()) // the files are compiled in
	}
	return files
}

// compressible types are gzipped once, when the handler is made.
func compressible(contentType string) bool {
	return strings.HasPrefix(contentType, "text/") || contentType == "image/svg+xml"
}

func gzipped(body []byte) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = w.Write(body)
	_ = w.Close()
	return b.Bytes()
}

// acceptsGzip tells whether a request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Serves tells whether path is one of the client's own (the page, a
// file below AssetPrefix, existing or not, or an invitation link).
func (h *Handler) Serves(path string) bool {
	return path == "/" || strings.HasPrefix(path, AssetPrefix) || strings.HasPrefix(path, JoinPrefix)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.Serves(r.URL.Path) {
		if h.next != nil {
			h.next.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	setSecurityHeaders(hd)
	if strings.HasPrefix(r.URL.Path, JoinPrefix) {
		h.serveJoin(w, r)
		return
	}
	a, ok := h.files[r.URL.Path]
	if !ok {
		http.Error(w, "Not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The files change with the binary: browsers revalidate each time and
	// get 304 while the ETag (a hash of the content) matches.
	body, etag := a.body, a.etag
	if a.gz != nil {
		hd.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			body, etag = a.gz, a.gzETag
			hd.Set("Content-Encoding", "gzip")
		}
	}
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		hd.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", a.contentType)
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// serveJoin answers an invitation link (/join/<key>/) with a redirect to
// the page's join form, #join/<key>, relative to the link.
func (h *Handler) serveJoin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	key := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, JoinPrefix), "/")
	if !joinKey.MatchString(key) {
		http.Error(w, "This is not an invitation link.", http.StatusNotFound)
		return
	}
	up := strings.Repeat("../", strings.Count(r.URL.Path, "/")-1)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", up+"#join/"+key)
	w.WriteHeader(http.StatusFound)
}

// setSecurityHeaders sets the headers every answer of the client carries.
func setSecurityHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY") // for browsers without frame-ancestors
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
}

func etagMatches(header, etag string) bool {
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimSpace(v)
		if v == etag || v == "*" || v == "W/"+etag {
			return true
		}
	}
	return false
}
