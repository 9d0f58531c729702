package mailin

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Parse reads headers in other charsets, nested parts, transfer encodings
// and file names.
func TestParse(t *testing.T) {
	raw := "From: =?iso-8859-1?q?Ren=E9?= <rene@example.org>\r\nSubject: =?utf-8?b?w6l0w6k=?=\r\nMessage-ID: <x@y>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n" +
		"--B\r\nContent-Type: text/plain; charset=windows-1252\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=80 5\r\n" +
		"--B\r\nContent-Type: text/plain\r\n\r\nsecond plain part, not the body\r\n" +
		"--B\r\nContent-Type: image/png\r\nContent-Disposition: inline; filename=\"../../etc/=?utf-8?q?p=C3=A9.png?=\"\r\nContent-Transfer-Encoding: base64\r\n\r\naGVs\r\nbG8=\r\n" +
		"--B--\r\n"
	m, err := Parse([]byte(raw))
	require.NoError(t, err)
	assert.Equal(t, "René <rene@example.org>", m.From)
	assert.Equal(t, "été", m.Subject)
	assert.Equal(t, "<x@y>", m.MessageID)
	require.NotNil(t, m.Text)
	assert.Equal(t, "€ 5", *m.Text)
	assert.Nil(t, m.HTML)
	require.Len(t, m.Attachments, 1)
	assert.Equal(t, "pé.png", m.Attachments[0].FileName, "no directories")
	assert.Equal(t, "hello", string(m.Attachments[0].Content))
	assert.Len(t, m.Digest, 64)

	_, err = Parse([]byte("no header line"))
	assert.Error(t, err)
	deep := "Content-Type: multipart/mixed; boundary=B\r\n\r\n" + strings.Repeat("--B\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n", 30)
	_, err = Parse([]byte(deep))
	assert.NoError(t, err, "a broken nesting ends the walk, not the server")
	deeper := "Content-Type: multipart/mixed; boundary=B\r\n\r\n" + strings.Repeat("--B\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\nx\r\n", 30)
	_, err = Parse([]byte(deeper))
	assert.NoError(t, err)
}

// Whatever arrives, Parse returns without panicking, with UTF-8 bodies.
func FuzzParse(f *testing.F) {
	f.Add([]byte("Subject: x\r\n\r\nbody"))
	f.Add([]byte("Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/html; charset=koi8-r\r\n\r\n<p>\xc1</p>\r\n--b--"))
	f.Add([]byte("Content-Transfer-Encoding: base64\r\n\r\n!!!"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Parse(raw)
		if err != nil {
			return
		}
		for _, b := range []*string{m.Text, m.HTML} {
			if b != nil && !utf8.ValidString(*b) {
				t.Fatalf("invalid UTF-8 body %q", *b)
			}
		}
	})
}
